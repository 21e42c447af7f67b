package virtualingress

import "github.com/virtual-ingress/virtual-ingress/internal/virtualingress/controller"

// NameSuffix is what the chart appends, with its default values, to a VirtualIngress's (VirtualHTTPRoute's) name to
// name the object generated from it.
const NameSuffix = controller.DefaultNameSuffix

// GeneratedName is the name of the Ingress (HTTPRoute) the chart's policies generate, with its default values, from
// the VirtualIngress (VirtualHTTPRoute) named source.
func GeneratedName(source string) string {
	return source + NameSuffix
}
