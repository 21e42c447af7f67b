// Package openshiftscc is OpenShift's SecurityContextConstraints admission, as far as the charts here meet it:
// restricted-v2 (what every authenticated ServiceAccount may use) and hostnetwork-v2, their UID, fsGroup and SELinux
// assignment from the namespace's annotations, and their validation of capabilities, seccomp, volumes, privilege
// escalation and host namespaces and ports. OpenShift's own admission library is not served by the Go module proxy,
// so its rules are written down here, once, from the SCC definitions of OpenShift 4.11+ and the admission plugin's
// strategies (MustRunAsRange, MustRunAs, RunAsAny).
package openshiftscc
