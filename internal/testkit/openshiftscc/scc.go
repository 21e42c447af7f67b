package openshiftscc

import corev1 "k8s.io/api/core/v1"

// SCC is the part of a SecurityContextConstraints that differs between the two the charts meet. Both assign the UID
// from the namespace's range (runAsUser MustRunAsRange), the fsGroup from its supplemental groups (MustRunAs), the
// SELinux level from its MCS label (MustRunAs) and take any supplemental groups (RunAsAny).
type SCC struct {
	Name                     string
	AllowHostNetwork         bool
	AllowHostPorts           bool
	AllowHostPID             bool
	AllowHostIPC             bool
	AllowPrivilegedContainer bool
	AllowPrivilegeEscalation bool
	// AllowedCapabilities may be added by a container; RequiredDropCapabilities are dropped whatever it asks.
	AllowedCapabilities      []corev1.Capability
	RequiredDropCapabilities []corev1.Capability
	// Volumes are the volume types allowed, by the name of their field in a Pod's volume (configMap, hostPath ...).
	Volumes []string
	// SeccompProfiles are the profiles allowed, in the SCC's notation; the first is the default.
	SeccompProfiles []string
}

// restrictedVolumes are the volume types of restricted-v2 and hostnetwork-v2: no hostPath, no network file systems.
var restrictedVolumes = []string{
	"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret",
}

// RestrictedV2 is the SCC every authenticated user and ServiceAccount may use on OpenShift 4.11 and later.
var RestrictedV2 = SCC{
	Name:                     "restricted-v2",
	AllowedCapabilities:      []corev1.Capability{"NET_BIND_SERVICE"},
	RequiredDropCapabilities: []corev1.Capability{"ALL"},
	Volumes:                  restrictedVolumes,
	SeccompProfiles:          []string{"runtime/default"},
}

// HostNetworkV2 is restricted-v2 plus the node's network namespace and ports; an administrator grants it to a
// ServiceAccount (`oc adm policy add-scc-to-user hostnetwork-v2 -z <sa>`).
var HostNetworkV2 = SCC{
	Name:                     "hostnetwork-v2",
	AllowHostNetwork:         true,
	AllowHostPorts:           true,
	AllowedCapabilities:      []corev1.Capability{"NET_BIND_SERVICE"},
	RequiredDropCapabilities: []corev1.Capability{"ALL"},
	Volumes:                  restrictedVolumes,
	SeccompProfiles:          []string{"runtime/default"},
}
