package gatewayapi

const (
	// Module is the Go module the CRDs come from.
	Module = "sigs.k8s.io/gateway-api"
	// Version is the Gateway API release the chart generates routes for and the tests install.
	Version = "v1.7.0"
	// ZipHash is the module's hash as go.sum records it (sum.golang.org); a fetched zip must match it.
	ZipHash = "h1:duVnm7nO6oXfMMUWfcDoBph47CYR/ME3NGxccOVglaY="
)
