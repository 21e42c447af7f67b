// Package gatewayapi provides Gateway API's standard-channel CRDs from the pinned sigs.k8s.io/gateway-api module:
// the VirtualHTTPRoute CRD's spec is generated from its HTTPRoute schema, and the end-to-end suite installs them.
//
// The module is fetched as a zip from the Go module proxy and checked against its go.sum hash, not through `go mod
// download`: its go.mod asks for a newer Go than this repository builds with, and the go command refuses to extract
// such a module. Nothing is compiled from it; only its YAML is read.
package gatewayapi
