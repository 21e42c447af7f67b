package openshiftscc

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// restrictedPod is what a chart here renders for OpenShift: no IDs, RuntimeDefault, everything dropped.
func restrictedPod() corev1.PodSpec {
	return corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name:  "app",
			Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}},
		Volumes: []corev1.Volume{{Name: "c", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}}},
	}
}

var ns = NewNamespace("apps", 1000680000, 10000)

func TestAssignsIDsFromTheNamespace(t *testing.T) {
	got, err := Admit(RestrictedV2, ns, restrictedPod())
	if err != nil {
		t.Fatal(err)
	}
	if uid := got.Containers[0].SecurityContext.RunAsUser; uid == nil || *uid != 1000680000 {
		t.Errorf("runAsUser %v, want the range's first, 1000680000", uid)
	}
	if g := got.SecurityContext.FSGroup; g == nil || *g != 1000680000 {
		t.Errorf("fsGroup %v, want 1000680000", g)
	}
	if l := got.SecurityContext.SELinuxOptions; l == nil || l.Level != "s0:c26,c5" {
		t.Errorf("SELinux options %v, want the namespace's level", l)
	}
	if d := got.Containers[0].SecurityContext.Capabilities.Drop; len(d) != 1 || d[0] != "ALL" {
		t.Errorf("drop %v", d)
	}
}

// Each rule refuses what it is there for, with a message that names it.
func TestRefuses(t *testing.T) {
	for _, c := range []struct {
		name, want string
		scc        SCC
		change     func(*corev1.PodSpec)
	}{
		{"fixed UID outside the range", "runAsUser 65532 is not in", RestrictedV2,
			func(p *corev1.PodSpec) { p.SecurityContext.RunAsUser = ptr(int64(65532)) }},
		{"container UID outside the range", "container app: runAsUser 0 is not in", RestrictedV2,
			func(p *corev1.PodSpec) { p.Containers[0].SecurityContext.RunAsUser = ptr(int64(0)) }},
		{"fsGroup outside the range", "fsGroup 65532", RestrictedV2,
			func(p *corev1.PodSpec) { p.SecurityContext.FSGroup = ptr(int64(65532)) }},
		{"a capability not allowed", "capability NET_ADMIN may not be added", RestrictedV2,
			func(p *corev1.PodSpec) {
				p.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_ADMIN"}
			}},
		{"ALL added back", "capability ALL is required to be dropped", RestrictedV2,
			func(p *corev1.PodSpec) { p.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"ALL"} }},
		{"privilege escalation", "allowPrivilegeEscalation is not allowed", RestrictedV2,
			func(p *corev1.PodSpec) { p.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr(true) }},
		{"privileged", "privileged is not allowed", HostNetworkV2,
			func(p *corev1.PodSpec) { p.Containers[0].SecurityContext.Privileged = ptr(true) }},
		{"unconfined seccomp", "seccomp profile unconfined", RestrictedV2,
			func(p *corev1.PodSpec) { p.SecurityContext.SeccompProfile.Type = corev1.SeccompProfileTypeUnconfined }},
		{"host network", "hostNetwork is not allowed", RestrictedV2,
			func(p *corev1.PodSpec) { p.HostNetwork = true }},
		{"host network's implied host port", "hostPort 8080 is not allowed", RestrictedV2,
			func(p *corev1.PodSpec) { p.HostNetwork = true }},
		{"host port", "hostPort 80", RestrictedV2,
			func(p *corev1.PodSpec) { p.Containers[0].Ports[0].HostPort = 80 }},
		{"host PID", "hostPID", HostNetworkV2, func(p *corev1.PodSpec) { p.HostPID = true }},
		{"hostPath", "type hostPath is not allowed", HostNetworkV2, func(p *corev1.PodSpec) {
			p.Volumes = append(p.Volumes, corev1.Volume{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		}},
		{"an SELinux type", "seLinuxOptions", RestrictedV2, func(p *corev1.PodSpec) {
			p.SecurityContext.SELinuxOptions = &corev1.SELinuxOptions{Level: "s0:c26,c5", Type: "spc_t"}
		}},
		{"an unsafe sysctl", "sysctl net.core.somaxconn", RestrictedV2, func(p *corev1.PodSpec) {
			p.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := restrictedPod()
			c.change(&p)
			_, err := Admit(c.scc, ns, p)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// What the rules allow: NET_BIND_SERVICE, an ID inside the range, and the node's network under hostnetwork-v2.
func TestAllows(t *testing.T) {
	p := restrictedPod()
	p.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_BIND_SERVICE"}
	p.SecurityContext.RunAsUser = ptr(int64(1000689999))
	p.SecurityContext.FSGroup = ptr(int64(1000680001))
	if _, err := Admit(RestrictedV2, ns, p); err != nil {
		t.Error(err)
	}
	p = restrictedPod()
	p.HostNetwork = true
	got, err := Admit(HostNetworkV2, ns, p)
	if err != nil {
		t.Fatal(err)
	}
	if hp := got.Containers[0].Ports[0].HostPort; hp != 8080 {
		t.Errorf("host port %d, want the container port", hp)
	}
}

func TestNamespaceRanges(t *testing.T) {
	for _, c := range []struct {
		annotations map[string]string
		uid, group  idRange
		err         string
	}{
		{map[string]string{UIDRangeAnnotation: "1000/10", SupplementalGroupsAnnotation: "5000-5009"},
			idRange{1000, 1009}, idRange{5000, 5009}, ""},
		// Without supplemental groups the fsGroup comes from the UID block.
		{map[string]string{UIDRangeAnnotation: "1000/10"}, idRange{1000, 1009}, idRange{1000, 1009}, ""},
		{map[string]string{}, idRange{}, idRange{}, "no openshift.io/sa.scc.uid-range"},
		{map[string]string{UIDRangeAnnotation: "1000/0"}, idRange{}, idRange{}, "empty"},
		{map[string]string{UIDRangeAnnotation: "1000"}, idRange{}, idRange{}, "neither"},
	} {
		n := Namespace{Name: "n", Annotations: c.annotations}
		uid, err := n.uidRange()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.annotations, err, c.err)
			}
			continue
		}
		groups, err2 := n.groupRanges()
		if err != nil || err2 != nil || uid != c.uid || len(groups) != 1 || groups[0] != c.group {
			t.Errorf("%v: uids %v groups %v (%v, %v)", c.annotations, uid, groups, err, err2)
		}
	}
}

func TestDeclared(t *testing.T) {
	if err := Declared(restrictedPod()); err != nil {
		t.Error(err)
	}
	p := restrictedPod()
	p.SecurityContext = nil
	p.Containers[0].SecurityContext.Capabilities = nil
	err := Declared(p)
	for _, want := range []string{"seccomp", "runAsNonRoot", "capabilities not all dropped"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
}
