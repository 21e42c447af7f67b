// Package traffic runs a real data plane for virtual-ingress's generated objects: Traefik (built from its pinned
// module, tools/devcluster/binaries/traefik) as a process beside a devcluster with a node, serving Ingresses of
// IngressClass Class and HTTPRoutes attached to the Gateway Namespace/Gateway, with the node's echo Pods as tenant
// backends. The node tier's end-to-end tests, the traffic bench and `make demo-virtualingress` send their requests through it.
//
// Traefik listens on the host's end of the node's link (devcluster.HostIP), which the Ingress and Gateway status report, and acts
// as its own ServiceAccount with the ClusterRole Traefik's chart grants: it sees only what a real install would.
package traffic
