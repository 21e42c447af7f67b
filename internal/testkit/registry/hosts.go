package registry

import "fmt"

// HostsTOML is the containerd hosts.toml that makes containerd pull from host (host:port) over TLS trusting only
// caFile. It goes to <config_path>/<host>/hosts.toml, where config_path is the CRI plugin's
// `[plugins."io.containerd.grpc.v1.cri".registry] config_path` (containerd 1.5 and later): containerd then trusts
// the registry and nothing else on the machine has to.
func HostsTOML(host, caFile string) string {
	return fmt.Sprintf(`server = "https://%[1]s"

[host."https://%[1]s"]
  capabilities = ["pull", "resolve"]
  ca = %[2]q
`, host, caFile)
}

// HostsTOML is the hosts.toml trusting this registry (see the package-level HostsTOML).
func (r *Registry) HostsTOML() string { return HostsTOML(r.Host, r.CAFile) }
