// Package nodecanary proves that a devcluster node touches nothing on the host it did not create (go test -tags node,
// part of make e2e-node; root on Linux). Its test puts stand-ins for other software on the host — a kube-proxy's and
// a CNI plugin's iptables chains, a bridge and a veth, a network namespace's bind mount, a kubelet's file, a kubelet's
// cgroup with a process in it — and changes sysctls while a node runs, then checks each is as it was after a normal
// stop, after the test process is killed with SIGKILL, and after the next start's clean-up.
package nodecanary
