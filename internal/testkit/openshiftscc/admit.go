package openshiftscc

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Admit does to a Pod what SCC admission does under scc in ns: it fills in what the SCC generates (every
// container's UID, the fsGroup, the SELinux level, the seccomp profile, the dropped capabilities, no privilege
// escalation), then validates the result, and returns the Pod as it would be created, or every violation. Like the
// API server before admission, it gives a hostNetwork Pod's ports their host ports.
func Admit(scc SCC, ns Namespace, in corev1.PodSpec) (corev1.PodSpec, error) {
	spec := *in.DeepCopy()
	uids, err := ns.uidRange()
	if err != nil {
		return spec, err
	}
	groups, err := ns.groupRanges()
	if err != nil {
		return spec, err
	}
	a := admission{scc: scc, uids: uids, groups: groups, mcs: ns.Annotations[MCSAnnotation]}
	a.pod(&spec)
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			a.container(&spec, &list[i])
		}
	}
	return spec, errors.Join(a.errs...)
}

type admission struct {
	scc    SCC
	uids   idRange
	groups []idRange
	mcs    string
	errs   []error
}

func (a *admission) refuse(format string, args ...any) {
	a.errs = append(a.errs, fmt.Errorf("%s: "+format, append([]any{a.scc.Name}, args...)...))
}

func (a *admission) pod(spec *corev1.PodSpec) {
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	psc := spec.SecurityContext
	if psc.FSGroup == nil {
		psc.FSGroup = ptr(a.groups[0].min)
	} else if !inAny(a.groups, *psc.FSGroup) {
		a.refuse("fsGroup %d is not in the namespace's ranges %v", *psc.FSGroup, a.groups)
	}
	if psc.RunAsUser != nil && !a.uids.contains(*psc.RunAsUser) {
		a.refuse("pod runAsUser %d is not in the namespace's range [%d, %d]", *psc.RunAsUser, a.uids.min, a.uids.max)
	}
	if psc.SELinuxOptions == nil {
		psc.SELinuxOptions = &corev1.SELinuxOptions{Level: a.mcs}
	} else {
		a.seLinux("pod", psc.SELinuxOptions)
	}
	if psc.SeccompProfile == nil {
		psc.SeccompProfile = profileOf(a.scc.SeccompProfiles[0])
	} else {
		a.seccomp("pod", psc.SeccompProfile)
	}
	for _, s := range psc.Sysctls {
		if !slices.Contains(safeSysctls, s.Name) {
			a.refuse("sysctl %s is not safe", s.Name)
		}
	}
	if spec.HostNetwork && !a.scc.AllowHostNetwork {
		a.refuse("hostNetwork is not allowed")
	}
	if spec.HostPID && !a.scc.AllowHostPID {
		a.refuse("hostPID is not allowed")
	}
	if spec.HostIPC && !a.scc.AllowHostIPC {
		a.refuse("hostIPC is not allowed")
	}
	for _, v := range spec.Volumes {
		if t := volumeType(v); !slices.Contains(a.scc.Volumes, t) {
			a.refuse("volume %s: type %s is not allowed", v.Name, t)
		}
	}
}

func (a *admission) container(spec *corev1.PodSpec, c *corev1.Container) {
	if c.SecurityContext == nil {
		c.SecurityContext = &corev1.SecurityContext{}
	}
	sc := c.SecurityContext
	// The UID goes on each container, the pod's when it has one, else the first of the range.
	if sc.RunAsUser == nil {
		uid := a.uids.min
		if spec.SecurityContext.RunAsUser != nil {
			uid = *spec.SecurityContext.RunAsUser
		}
		sc.RunAsUser = ptr(uid)
	}
	if !a.uids.contains(*sc.RunAsUser) {
		a.refuse("container %s: runAsUser %d is not in the namespace's range [%d, %d]",
			c.Name, *sc.RunAsUser, a.uids.min, a.uids.max)
	}
	// What the kubelet checks before it starts the container: admission makes the UID numeric, so it can.
	nonRoot := sc.RunAsNonRoot
	if nonRoot == nil {
		nonRoot = spec.SecurityContext.RunAsNonRoot
	}
	if nonRoot != nil && *nonRoot && *sc.RunAsUser == 0 {
		a.refuse("container %s: runAsNonRoot with UID 0", c.Name)
	}
	if sc.Privileged != nil && *sc.Privileged && !a.scc.AllowPrivilegedContainer {
		a.refuse("container %s: privileged is not allowed", c.Name)
	}
	if sc.AllowPrivilegeEscalation == nil {
		sc.AllowPrivilegeEscalation = ptr(a.scc.AllowPrivilegeEscalation)
	} else if *sc.AllowPrivilegeEscalation && !a.scc.AllowPrivilegeEscalation {
		a.refuse("container %s: allowPrivilegeEscalation is not allowed", c.Name)
	}
	a.capabilities(c)
	if sc.SELinuxOptions != nil {
		a.seLinux("container "+c.Name, sc.SELinuxOptions)
	}
	if sc.SeccompProfile != nil {
		a.seccomp("container "+c.Name, sc.SeccompProfile)
	}
	for i := range c.Ports {
		p := &c.Ports[i]
		if spec.HostNetwork && p.HostPort == 0 {
			p.HostPort = p.ContainerPort
		}
		if p.HostPort != 0 && !a.scc.AllowHostPorts {
			a.refuse("container %s: hostPort %d is not allowed", c.Name, p.HostPort)
		}
	}
}

// capabilities adds the SCC's required drops and refuses an added capability it does not allow, or one it requires
// dropped (by name: NET_BIND_SERVICE may be added while ALL is dropped).
func (a *admission) capabilities(c *corev1.Container) {
	sc := c.SecurityContext
	if sc.Capabilities == nil {
		sc.Capabilities = &corev1.Capabilities{}
	}
	for _, d := range a.scc.RequiredDropCapabilities {
		if !slices.Contains(sc.Capabilities.Drop, d) {
			sc.Capabilities.Drop = append(sc.Capabilities.Drop, d)
		}
	}
	for _, add := range sc.Capabilities.Add {
		switch {
		case slices.Contains(a.scc.RequiredDropCapabilities, add):
			a.refuse("container %s: capability %s is required to be dropped but was added", c.Name, add)
		case !slices.Contains(a.scc.AllowedCapabilities, add):
			a.refuse("container %s: capability %s may not be added", c.Name, add)
		}
	}
}

// seLinux refuses options other than the namespace's level (MustRunAs with only a level set).
func (a *admission) seLinux(where string, o *corev1.SELinuxOptions) {
	if o.Level != a.mcs || o.User != "" || o.Role != "" || o.Type != "" {
		a.refuse("%s: seLinuxOptions %+v differ from the namespace's level %q", where, *o, a.mcs)
	}
}

func (a *admission) seccomp(where string, p *corev1.SeccompProfile) {
	if name := profileName(p); !slices.Contains(a.scc.SeccompProfiles, name) {
		a.refuse("%s: seccomp profile %s is not one of %v", where, name, a.scc.SeccompProfiles)
	}
}

// profileName is a seccomp profile in the SCC's notation.
func profileName(p *corev1.SeccompProfile) string {
	switch p.Type {
	case corev1.SeccompProfileTypeRuntimeDefault:
		return "runtime/default"
	case corev1.SeccompProfileTypeUnconfined:
		return "unconfined"
	case corev1.SeccompProfileTypeLocalhost:
		if p.LocalhostProfile != nil {
			return "localhost/" + *p.LocalhostProfile
		}
	}
	return string(p.Type)
}

func profileOf(name string) *corev1.SeccompProfile {
	if name == "runtime/default" {
		return &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	return &corev1.SeccompProfile{Type: corev1.SeccompProfileType(name)}
}

// volumeType is the volume's type by its field name, which is how SCCs list them.
func volumeType(v corev1.Volume) string {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&v)
	if err != nil {
		return "unknown"
	}
	for k := range m {
		if k != "name" {
			return k
		}
	}
	return "unknown"
}

// safeSysctls are the sysctls Kubernetes calls safe; SCCs without allowedUnsafeSysctls allow only these.
var safeSysctls = []string{
	"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
	"net.ipv4.ip_unprivileged_port_start", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
	"net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes",
}

func inAny(rs []idRange, id int64) bool {
	return slices.ContainsFunc(rs, func(r idRange) bool { return r.contains(id) })
}

func ptr[T any](v T) *T { return &v }
