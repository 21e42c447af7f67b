// Package attachment checks, from inside a CoreDNS or HAProxy Pod, that the secondary networks its
// k8s.v1.cni.cncf.io/networks annotation asks for are attached. Where Multus is not the cluster's CNI, nothing reads
// that annotation: the Pod starts with its pod-network interface only and becomes Ready, while VLAN clients cannot
// reach it. Run before the servers (an init container), the check keeps such a Pod from ever being Ready, and says
// why; where Multus runs, a failed attachment already stops the Pod's sandbox from being created.
package attachment

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// NetworksAnnotation is the Pod annotation that asks Multus for secondary networks.
const NetworksAnnotation = "k8s.v1.cni.cncf.io/networks"

// Network is one secondary network a Pod asks for, and the interface Multus names it in the Pod.
type Network struct {
	Name      string
	Interface string
}

// Requested parses the networks annotation: a JSON list of selection elements, or the short form
// "[namespace/]name[@interface]", comma-separated. Multus names the interfaces it is not given net1, net2, ... in
// the order asked.
func Requested(annotation string) ([]Network, error) {
	annotation = strings.TrimSpace(annotation)
	if annotation == "" {
		return nil, nil
	}
	var out []Network
	if strings.HasPrefix(annotation, "[") {
		var elems []struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
			Interface string `json:"interface"`
		}
		if err := json.Unmarshal([]byte(annotation), &elems); err != nil {
			return nil, fmt.Errorf("%s is not a JSON list of networks: %w", NetworksAnnotation, err)
		}
		for _, e := range elems {
			name := e.Name
			if e.Namespace != "" {
				name = e.Namespace + "/" + e.Name
			}
			out = append(out, Network{Name: name, Interface: e.Interface})
		}
	} else {
		for _, item := range strings.Split(annotation, ",") {
			name, iface, _ := strings.Cut(strings.TrimSpace(item), "@")
			out = append(out, Network{Name: name, Interface: iface})
		}
	}
	for i := range out {
		if out[i].Name == "" || strings.HasSuffix(out[i].Name, "/") {
			return nil, fmt.Errorf("%s: network %d has no name", NetworksAnnotation, i+1)
		}
		if out[i].Interface == "" {
			out[i].Interface = "net" + strconv.Itoa(i+1)
		}
	}
	return out, nil
}

// FromDownwardAPI returns the networks annotation from the content of a Downward API "annotations" file (one
// key="quoted value" per line); "" when the Pod has none.
func FromDownwardAPI(content string) (string, error) {
	sc := bufio.NewScanner(strings.NewReader(content))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		key, quoted, ok := strings.Cut(sc.Text(), "=")
		if !ok || key != NetworksAnnotation {
			continue
		}
		value, err := strconv.Unquote(quoted)
		if err != nil {
			return "", fmt.Errorf("the annotations file's %s line: %w", NetworksAnnotation, err)
		}
		return value, nil
	}
	return "", sc.Err()
}

// Interface is what Check needs to know of one of the Pod's interfaces.
type Interface struct {
	Name  string
	Up    bool
	Addrs []net.IP
}

// Local lists the interfaces of the calling process's network namespace.
func Local() ([]Interface, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	out := make([]Interface, 0, len(ifaces))
	for _, ifc := range ifaces {
		addrs, err := ifc.Addrs()
		if err != nil {
			return nil, fmt.Errorf("addresses of %s: %w", ifc.Name, err)
		}
		i := Interface{Name: ifc.Name, Up: ifc.Flags&net.FlagUp != 0}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				i.Addrs = append(i.Addrs, ipn.IP)
			}
		}
		out = append(out, i)
	}
	return out, nil
}

// Check says, as an error naming the network and what the Pod has instead, which requested network is not attached:
// its interface missing, down, or without an address VLAN clients could reach (a global unicast one).
func Check(requested []Network, have []Interface) error {
	byName := map[string]Interface{}
	var names []string
	for _, i := range have {
		byName[i.Name] = i
		names = append(names, i.Name)
	}
	for _, n := range requested {
		i, ok := byName[n.Interface]
		switch {
		case !ok:
			return fmt.Errorf("the Pod asks for network %s as interface %s (%s) and has no such interface, only %s: the network is not attached (is Multus the cluster's CNI?)",
				n.Name, n.Interface, NetworksAnnotation, strings.Join(names, ", "))
		case !i.Up:
			return fmt.Errorf("interface %s of network %s is down", n.Interface, n.Name)
		case !hasGlobal(i.Addrs):
			return fmt.Errorf("interface %s of network %s has no address VLAN clients can reach (%v): check the NetworkAttachmentDefinition's IPAM", n.Interface, n.Name, i.Addrs)
		}
	}
	return nil
}

func hasGlobal(addrs []net.IP) bool {
	for _, a := range addrs {
		if a.IsGlobalUnicast() {
			return true
		}
	}
	return false
}
