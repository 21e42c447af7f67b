// Package dns renders the files of the CoreDNS that answers every hosted cluster's *.apps and api names with two
// views: clients in a cluster's VLAN CIDRs get the cluster's external IP(s), every other client (the pod network)
// gets the proxy's address.
//
// The pod-network view's wildcards are answered by the template plugin (a regular expression on the query name)
// rather than by hosts: the hosts plugin matched names exactly in the CoreDNS releases this was written against, so a
// "*.apps" entry there would never match a real name such as console-openshift-console.apps.<cluster>.<baseDomain>.
//
// The VLAN view's records live in a zone file per cluster (the file plugin, whose "*" records are standard DNS
// wildcards): a changed external IP then changes only that file, which the file plugin re-reads within
// Options.ZoneReloadInterval, instead of the Corefile, whose reload restarts every server block and cannot be checked
// more often than every 2 s.
//
// For the same reason a cluster's blocks and answers are written as soon as it is published at all (its API endpoint
// is known, before its apps Service has an address): the default view's answer, the proxy's address, does not depend
// on the Service, and the address's arrival then changes the zone file alone, which CoreDNS serves within
// ZoneReloadInterval instead of after a Corefile reload, which a fleet of new clusters keeps postponing. Until the
// address arrives, the VLAN view answers NODATA, and the proxy refuses the cluster's host names (no route yet).
package dns

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/virtual-ingress/virtual-ingress/internal/appsingress/routes"
)

// Options are the settings of the one CoreDNS that serves every AppsIngress.
type Options struct {
	// Port CoreDNS listens on (UDP and TCP). Default 53.
	Port int
	// Bind, when set, limits listening to these addresses (the bind plugin).
	Bind []string
	// ProxyIPs are the proxy Service's addresses: the default view's answer for *.apps and api names.
	ProxyIPs []netip.Addr
	// TTL of the answers, in seconds. Default 30.
	TTL int
	// ReloadInterval is the reload plugin's check period for the Corefile (minimum 2s). Default "2s".
	ReloadInterval string
	// ZoneDir is where CoreDNS finds the other files of the ConfigMap (its mount path). Default "/etc/coredns".
	ZoneDir string
	// ZoneReloadInterval is how often the file plugin checks a zone file's SOA serial. Default "500ms".
	ZoneReloadInterval string
	// Upstreams receive every other query (the forward plugin); none answers them REFUSED.
	Upstreams []string
	// HealthAddr and ReadyAddr, when set, serve the health and ready plugins (probes).
	HealthAddr, ReadyAddr string
	// Shards is how many shards the clusters' files are split into (each its own ConfigMap). Default 1.
	Shards int
	// VLANPort, when set, is a second listener with the same blocks, limited to VLANBind (addresses or interface
	// names): CoreDNS on a node's network (hostNetwork) answers VLAN clients on port 53 of the node's VLAN addresses
	// while the pod network and the operator keep reaching it through its Service on Port.
	VLANPort int
	VLANBind []string
	// ReloadRequest is part of the Corefile's generation: raising it changes the Corefile alone, which makes every
	// CoreDNS reload it with its imports (the operator's repair of a replica that serves less than the files hold).
	ReloadRequest uint64
}

// listener is one port CoreDNS serves every block on, possibly limited to some addresses.
type listener struct {
	port int
	bind []string
}

func (o Options) withDefaults() Options {
	if o.Port == 0 {
		o.Port = 53
	}
	if o.TTL == 0 {
		o.TTL = 30
	}
	if o.ReloadInterval == "" {
		o.ReloadInterval = "2s"
	}
	if o.ZoneDir == "" {
		o.ZoneDir = "/etc/coredns"
	}
	if o.Shards < 1 {
		o.Shards = 1
	}
	if o.ZoneReloadInterval == "" {
		o.ZoneReloadInterval = "500ms"
	}
	return o
}

// CorefileKey is the Corefile's name among the rendered files; every other file is one it imports or a zone file.
const CorefileKey = "Corefile"

// Names of each shard's files: its clusters' VLAN-view server blocks, imported at the top of the Corefile, their
// default-view answers, imported into the catch-all block, and their names refused to other VLANs' clients.
const (
	vlanBlocksPrefix = "vlan"
	defaultPrefix    = "default"
	refusedPrefix    = "refused"
	importSuffix     = ".conf"
)

// Render returns the files of the DNS configuration for clusters: per shard (o.Shards of them) the server blocks and
// answers of its clusters and one zone file per VLAN view, and the Corefile, which imports every shard's files by a
// glob. A changed external IP changes only a zone file, which the file plugin re-reads.
//
// The Corefile also names its generation (GenerationName): a digest of the imported files and o.ReloadRequest. A
// changed shard must change the Corefile too. CoreDNS's reload plugin compares the Corefile on disk, with its imports,
// to a baseline it takes once the new instance runs: it hashes the running instance's Corefile with the imports as they
// are then, not as the instance read them. Imports that change again while it restarts are in the baseline but not
// served, and with an unchanged Corefile nothing would ever differ again. With the digest, the Corefile on disk
// differs from the running one, and the next check reloads.
//
// It is a pure function of its inputs: the same set gives the same bytes, so an unchanged render reloads nothing.
func Render(o Options, clusters []routes.Cluster) routes.Files {
	o = o.withDefaults()
	listeners := []listener{{o.Port, o.Bind}}
	if o.VLANPort != 0 {
		listeners = append(listeners, listener{o.VLANPort, o.VLANBind})
	}
	var files routes.Files
	for i, shard := range routes.ByShard(routes.Sorted(clusters), o.Shards) {
		sf := map[string]string{}
		var blocks, answers, refused strings.Builder
		blocks.WriteString(header)
		answers.WriteString(header)
		refused.WriteString(header)
		for _, l := range listeners {
			writeVLANBlocks(&blocks, sf, o, l, shard)
		}
		if vlans := vlanCIDRs(shard); len(vlans) > 0 {
			writeOtherVLANs(&blocks, o, listeners[0], vlans)
		}
		if len(o.ProxyIPs) > 0 {
			writeDefaultAnswers(&answers, o, shard)
		}
		writeRefusals(&refused, shard)
		sf[routes.ShardName(vlanBlocksPrefix, i)+importSuffix] = blocks.String()
		sf[routes.ShardName(defaultPrefix, i)+importSuffix] = answers.String()
		sf[routes.ShardName(refusedPrefix, i)+importSuffix] = refused.String()
		files.Shards = append(files.Shards, sf)
	}
	generation := Generation(files.Shards, o.ReloadRequest)
	var b strings.Builder
	b.WriteString(header)
	fmt.Fprintf(&b, "\n# Every shard's VLAN views\nimport %s\n", path.Join(o.ZoneDir, vlanBlocksPrefix+"-*"+importSuffix))
	for i, l := range listeners {
		if i == 0 {
			b.WriteString("\n# Default view (the pod network) and everything else\n")
			writeCatchAll(&b, o, l, generation)
			continue
		}
		fmt.Fprintf(&b, "\n# VLAN clients on port %d of %s: a cluster's names are theirs only when its VLAN view (above) takes them\n",
			l.port, strings.Join(l.bind, " "))
		writeVLANCatchAll(&b, o, l)
	}
	files.Main = map[string]string{CorefileKey: b.String()}
	return files
}

// GenerationName is the name whose TXT record is the served Corefile's generation: a reserved top-level domain
// (RFC 2606), so it names nothing anyone else may publish, and no client asks for it by chance.
const GenerationName = "config.apps-ingress.invalid"

// Generation is the generation a Corefile importing the shards' files (see Render) is written with: the imports'
// digest and the reload request. Zone files are left out: the file plugin reloads them without the Corefile.
func Generation(shards []map[string]string, reloadRequest uint64) string {
	h := sha256.New()
	for _, shard := range shards {
		for _, name := range slices.Sorted(maps.Keys(shard)) {
			if strings.HasSuffix(name, importSuffix) {
				fmt.Fprintf(h, "%s\x00%d\x00%s", name, len(shard[name]), shard[name])
			}
		}
	}
	return fmt.Sprintf("%x-%d", h.Sum(nil)[:8], reloadRequest)
}

// ReloadRequestOf is the reload request a generation was written with.
func ReloadRequestOf(generation string) (uint64, error) {
	_, n, ok := strings.Cut(generation, "-")
	if !ok {
		return 0, fmt.Errorf("%q is no configuration generation", generation)
	}
	return strconv.ParseUint(n, 10, 64)
}

const header = "# Generated by apps-ingress-operator; edits are overwritten.\n"

// writeVLANBlocks writes the VLAN-view server blocks of clusters on l, and their zone files into files.
func writeVLANBlocks(b *strings.Builder, files map[string]string, o Options, l listener, clusters []routes.Cluster) {
	o.Port, o.Bind = l.port, l.bind
	for _, c := range clusters {
		if len(c.VLANCIDRs) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n# %s: VLAN view\n%s.:%d {\n", c.Key, c.AppsDomain(), o.Port)
		writeBind(b, o)
		// The probe name gets this view from any client: the operator, outside the VLAN, asks it to learn whether
		// CoreDNS serves the zone file it wrote.
		fmt.Fprintf(b, "    view vlan-%s {\n        expr %s || name() == '%s.'\n    }\n",
			routes.SafeName(c.Key), cidrExpr(c.VLANCIDRs), VLANProbeName(c))
		name := zoneFileName(c)
		fmt.Fprintf(b, "    file %s %s. {\n        reload %s\n    }\n}\n", path.Join(o.ZoneDir, name), c.AppsDomain(), o.ZoneReloadInterval)
		files[name] = zone(c.AppsDomain(), c.ExternalIPs, o.TTL)
		writeVLANAPI(b, o, c)
	}
}

// writeCatchAll writes the "." block on the first listener: the Corefile's generation, the default view's answers
// (every shard's, imported), the probes and everything else. View blocks sharing a zone are tried before it: CoreDNS picks
// the most specific zone, and "." is the least.
func writeCatchAll(b *strings.Builder, o Options, l listener, generation string) {
	o.Port, o.Bind = l.port, l.bind
	fmt.Fprintf(b, ".:%d {\n", o.Port)
	writeBind(b, o)
	b.WriteString("    errors\n")
	fmt.Fprintf(b, "    reload %s\n", o.ReloadInterval)
	if o.HealthAddr != "" {
		fmt.Fprintf(b, "    health %s\n", o.HealthAddr)
	}
	if o.ReadyAddr != "" {
		fmt.Fprintf(b, "    ready %s\n", o.ReadyAddr)
	}
	fmt.Fprintf(b, "    template IN TXT %s. {\n        answer \"{{ .Name }} 0 IN TXT %s\"\n    }\n", GenerationName, generation)
	fmt.Fprintf(b, "    import %s\n", path.Join(o.ZoneDir, defaultPrefix+"-*"+importSuffix))
	writeOthers(b, o, true)
	b.WriteString("}\n")
}

// writeOtherVLANs writes, on the first listener, the "." block of the clients in a shard's VLAN CIDRs: a question
// about a cluster's names reaches it only when that cluster's VLAN view did not take it, so the client is on another
// cluster's VLAN, and every cluster's names (every shard's refusals) are REFUSED to it rather than answered with the
// proxy's address (which tells that the cluster exists, and leads to its routes). Other names go on as in the
// catch-all. Each shard has its block, so that the Corefile stays independent of the clusters: view blocks of one
// zone are tried in order, and the shards' files are imported before the catch-all, which has no view.
func writeOtherVLANs(b *strings.Builder, o Options, l listener, vlans []netip.Prefix) {
	b.WriteString("\n# Clients of these clusters' VLANs, asking about another cluster\n")
	writeRefusingBlock(b, o, l, fmt.Sprintf("    view vlan-clients {\n        expr %s\n    }\n", anyCIDRExpr(vlans)))
}

// writeVLANCatchAll writes the "." block of a listener only VLAN clients reach (o.VLANBind): every cluster's names
// are REFUSED to a client its VLAN view did not take, whatever its address, and other names go on as in the catch-all.
func writeVLANCatchAll(b *strings.Builder, o Options, l listener) {
	writeRefusingBlock(b, o, l, "")
}

// writeRefusingBlock writes a "." block on l, limited by view (a view directive, or "" for every client), that
// refuses every cluster's names (every shard's refusals) and sends other names on as the catch-all does.
func writeRefusingBlock(b *strings.Builder, o Options, l listener, view string) {
	o.Port, o.Bind = l.port, l.bind
	fmt.Fprintf(b, ".:%d {\n", o.Port)
	writeBind(b, o)
	b.WriteString(view)
	b.WriteString("    errors\n")
	fmt.Fprintf(b, "    import %s\n", path.Join(o.ZoneDir, refusedPrefix+"-*"+importSuffix))
	writeOthers(b, o, false)
	b.WriteString("}\n")
}

// writeRefusals answers REFUSED for the names of clusters, which the default view answers: directives of the blocks of
// clients on another cluster's VLAN, which import them. One regular expression per base domain keeps a shard of
// thousands of clusters within its ConfigMap.
func writeRefusals(b *strings.Builder, clusters []routes.Cluster) {
	apps, api := map[string][]string{}, map[string][]string{}
	for _, c := range clusters {
		apps[c.BaseDomain] = append(apps[c.BaseDomain], regexp.QuoteMeta(c.Name))
		if c.APIEndpoint != "" {
			api[c.BaseDomain] = append(api[c.BaseDomain], regexp.QuoteMeta(c.Name))
		}
	}
	domains := slices.Collect(maps.Keys(apps))
	for domain := range api {
		if _, both := apps[domain]; !both {
			domains = append(domains, domain)
		}
	}
	slices.Sort(domains)
	for _, domain := range domains {
		var names []string
		if len(apps[domain]) > 0 {
			names = append(names, `([-a-z0-9_]+\.)+apps\.(`+strings.Join(apps[domain], "|")+`)`)
		}
		if len(api[domain]) > 0 {
			names = append(names, `api\.(`+strings.Join(api[domain], "|")+`)`)
		}
		fmt.Fprintf(b, "    template ANY ANY %s. {\n        match \"^(%s)\\.%s\\.$\"\n        rcode REFUSED\n        fallthrough\n    }\n",
			domain, strings.Join(names, "|"), regexp.QuoteMeta(domain))
	}
}

// vlanCIDRs is the clusters' VLAN CIDRs, masked, sorted and once each.
func vlanCIDRs(clusters []routes.Cluster) []netip.Prefix {
	var out []netip.Prefix
	for _, c := range clusters {
		for _, p := range c.VLANCIDRs {
			out = append(out, p.Masked())
		}
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(out)
}

// writeDefaultAnswers writes the default view's answers for clusters: the proxy's addresses for their apps and api
// names. They are directives of the catch-all block, which imports them.
func writeDefaultAnswers(b *strings.Builder, o Options, clusters []routes.Cluster) {
	for _, c := range clusters {
		fmt.Fprintf(b, "# %s\n", c.Key)
		writeAnswers(b, c.AppsDomain(), wildcard(c.AppsDomain()), o.ProxyIPs, o.TTL)
		if c.APIEndpoint != "" {
			writeAnswers(b, c.APIName(), exact(c.APIName()), o.ProxyIPs, o.TTL)
		}
	}
}

// VLANProbeName is the name below c's apps domain that CoreDNS answers from c's VLAN view whatever the client's
// address. The leading underscore keeps it out of every route's host name (DNS-1123 labels have none).
func VLANProbeName(c routes.Cluster) string { return "_vlan-view-probe." + c.AppsDomain() }

// DefaultProbeName is a name below c's apps domain that a client outside the VLANs gets the proxy's address for.
func DefaultProbeName(c routes.Cluster) string { return "_default-view-probe." + c.AppsDomain() }

// writeVLANAPI gives VLAN clients the hosted API server's own address for api.<cluster>.<baseDomain>: the proxy's
// address, which the default view answers, is on the pod network, which the VLAN cannot reach. An endpoint host
// that is a name is answered with a CNAME to it; when it is the api name itself, the question goes to the upstreams,
// which publish it (REFUSED without upstreams, rather than the proxy's unreachable address).
func writeVLANAPI(b *strings.Builder, o Options, c routes.Cluster) {
	if c.APIEndpoint == "" {
		return
	}
	host, _, err := net.SplitHostPort(c.APIEndpoint)
	if err != nil {
		host = c.APIEndpoint
	}
	host = strings.TrimSuffix(host, ".")
	fmt.Fprintf(b, "\n# %s: VLAN view of the API name\n%s.:%d {\n", c.Key, c.APIName(), o.Port)
	writeBind(b, o)
	fmt.Fprintf(b, "    view vlan-api-%s {\n        expr %s\n    }\n", routes.SafeName(c.Key), cidrExpr(c.VLANCIDRs))
	addr, err := netip.ParseAddr(host)
	switch {
	case err == nil:
		writeAnswers(b, c.APIName(), exact(c.APIName()), []netip.Addr{addr}, o.TTL)
	case !strings.EqualFold(host, c.APIName()):
		fmt.Fprintf(b, "    template IN ANY %s. {\n        match \"%s\"\n        answer \"{{ .Name }} %d IN CNAME %s.\"\n        fallthrough\n    }\n",
			c.APIName(), exact(c.APIName()), o.TTL, host)
	}
	writeOthers(b, o, false)
	b.WriteString("}\n")
}

// writeOthers ends a server block: every question not answered above goes to the upstreams, or is REFUSED. The loop
// check belongs to the catch-all block only: its probe names must reach the block that sends them.
func writeOthers(b *strings.Builder, o Options, loop bool) {
	if len(o.Upstreams) > 0 && !loop {
		fmt.Fprintf(b, "    forward . %s\n", strings.Join(o.Upstreams, " "))
	} else if len(o.Upstreams) > 0 {
		// An upstream that leads back here (a cluster DNS forwarding the base domain to this CoreDNS, which forwards to
		// that cluster DNS) would send every other name of the domain round until it times out; the loop plugin
		// detects it at start and stops CoreDNS with "Loop ... detected" in its log instead.
		b.WriteString("    loop\n")
		fmt.Fprintf(b, "    forward . %s\n", strings.Join(o.Upstreams, " "))
	} else {
		b.WriteString("    template ANY ANY {\n        rcode REFUSED\n    }\n")
	}
}

func writeBind(b *strings.Builder, o Options) {
	if len(o.Bind) > 0 {
		fmt.Fprintf(b, "    bind %s\n", strings.Join(o.Bind, " "))
	}
}

// writeAnswers answers A and AAAA queries for names matching re within zone with ips (an empty answer, NODATA,
// for a family without addresses), other types with NODATA, and lets every other name fall through.
func writeAnswers(b *strings.Builder, zone, re string, ips []netip.Addr, ttl int) {
	v4, v6 := routes.Split(ips)
	for _, fam := range []struct {
		typ   string
		addrs []netip.Addr
	}{{"A", v4}, {"AAAA", v6}} {
		fmt.Fprintf(b, "    template IN %s %s. {\n        match \"%s\"\n", fam.typ, zone, re)
		for _, a := range fam.addrs {
			fmt.Fprintf(b, "        answer \"{{ .Name }} %d IN %s %s\"\n", ttl, fam.typ, a)
		}
		b.WriteString("        fallthrough\n    }\n")
	}
	fmt.Fprintf(b, "    template ANY ANY %s. {\n        match \"%s\"\n        fallthrough\n    }\n", zone, re)
}

// wildcard matches any name below domain (one label or more), not domain itself.
func wildcard(domain string) string {
	return `^([-a-z0-9_]+\.)+` + regexp.QuoteMeta(domain) + `\.$`
}

func exact(name string) string {
	return `^` + regexp.QuoteMeta(name) + `\.$`
}

func cidrExpr(cidrs []netip.Prefix) string {
	parts := make([]string, len(cidrs))
	for i, p := range cidrs {
		parts[i] = fmt.Sprintf("incidr(client_ip(), '%s')", p.Masked())
	}
	return strings.Join(parts, " || ")
}

// anyCIDRExpr is cidrExpr for many CIDRs, shorter: a shard's clusters may each have their own. Quoted, so that the
// Corefile's lexer takes the expression's "#" for no comment.
func anyCIDRExpr(cidrs []netip.Prefix) string {
	quoted := make([]string, len(cidrs))
	for i, p := range cidrs {
		quoted[i] = "'" + p.Masked().String() + "'"
	}
	return fmt.Sprintf(`"any([%s], incidr(client_ip(), #))"`, strings.Join(quoted, ", "))
}
