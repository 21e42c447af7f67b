package convert

import (
	"fmt"
	"slices"
	"strings"

	"github.com/virtual-ingress/virtual-ingress/internal/virtualingress/api/v1alpha1"
)

// What a route cannot say: which Gateway (an Ingress names a class, not a controller instance), TLS (a Gateway
// listener's) and the controller settings kept in annotations.

const (
	// legacyClassAnnotation names the class of Ingresses older than spec.ingressClassName; controllers still read it.
	legacyClassAnnotation = "kubernetes.io/ingress.class"
	placeholderGateway    = "gateway"
)

// parentFor is the Gateway the routes attach to, and a note unless --gateway named it: a class name is a guess (a
// Gateway of that name in the route's own namespace), the placeholder a blank to fill in.
func parentFor(obj sourceObject, gateway *parentRef) (parentRef, string) {
	if gateway != nil {
		return *gateway, ""
	}
	class, from := "", ""
	if c := obj.Spec.IngressClassName; c != nil && *c != "" {
		class, from = *c, "spec.ingressClassName"
	} else if c := obj.Metadata.Annotations[legacyClassAnnotation]; c != "" {
		class, from = c, "the "+legacyClassAnnotation+" annotation"
	}
	if class == "" {
		return parentRef{Name: placeholderGateway}, fmt.Sprintf("parentRefs names the placeholder Gateway %q: the source names "+
			"no ingress class; fill in the Gateway to attach to, or pass --gateway [namespace/]name", placeholderGateway)
	}
	return parentRef{Name: class}, fmt.Sprintf("parentRefs names Gateway %q after %s: a Gateway of that name must exist in "+
		"the route's namespace; pass --gateway [namespace/]name to attach to the Gateway that replaces the class", class, from)
}

// tlsNotes: a route has no TLS settings. The certificate moves to the HTTPS listener of the Gateway, which is
// usually another team's and another namespace's object.
func tlsNotes(tls []v1alpha1.TLS) []string {
	notes := make([]string, 0, len(tls))
	for i, t := range tls {
		hosts := "every host"
		if len(t.Hosts) > 0 {
			names := make([]string, len(t.Hosts))
			for j, h := range t.Hosts {
				names[j] = string(h)
			}
			hosts = strings.Join(names, ", ")
		}
		cert := "the Gateway's certificate for those hostnames (the entry has no secretName: the controller's default)"
		if t.SecretName != "" {
			cert = fmt.Sprintf("certificateRefs naming Secret %s (a ReferenceGrant in its namespace must allow a Gateway "+
				"elsewhere to read it)", t.SecretName)
		}
		notes = append(notes, fmt.Sprintf("spec.tls[%d]: TLS for %s is not part of a route: terminate it on an HTTPS listener "+
			"of the Gateway with %s, and redirect HTTP to HTTPS there if your controller did", i, hosts, cert))
	}
	return notes
}

// annotationsNote lists every annotation key: on an Ingress they are its controller's settings (rewrites, auth,
// timeouts, ...), which Gateway API expresses, if at all, elsewhere. None is copied to the routes.
func annotationsNote(annotations map[string]string) string {
	if len(annotations) == 0 {
		return ""
	}
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return "metadata.annotations not converted: move each to the Gateway, a policy attachment or a rule's filters, or " +
		"drop it: " + strings.Join(keys, ", ")
}
