// Package e2e proves the virtual-ingress chart on a real control plane: kube-apiserver, etcd and
// kube-controller-manager with Kyverno's admission and background controllers, all started as local processes by
// internal/testkit/devcluster, and the chart installed with Helm's SDK. Run with `make e2e-virtualingress` (go test -tags e2e).
package e2e
