{{/*
What the release renders (policy engine, VirtualHTTPRoute policies), what the policies of each kind are told about
it, and the chart values the policies read: shared by both policy engines.
*/}}

{{/*
The policy engine this release renders: "clusterPolicy" or "generatingPolicy". `auto` looks at what the cluster serves
(`helm template` users pass --api-versions policies.kyverno.io/v1/GeneratingPolicy).
*/}}
{{- define "virtual-ingress.engine" -}}
{{- $engine := .Values.policy.engine }}
{{- if eq $engine "auto" }}
{{- $engine = ternary "generatingPolicy" "clusterPolicy" (.Capabilities.APIVersions.Has "policies.kyverno.io/v1/GeneratingPolicy") }}
{{- end }}
{{- $engine }}
{{- end }}

{{/*
"true" when this release renders the VirtualHTTPRoute policies: gatewayAPI.routes true, or auto and the cluster serves
Gateway API's HTTPRoute (`helm template` users pass --api-versions gateway.networking.k8s.io/v1/HTTPRoute). Kyverno
refuses a policy that names a kind the cluster does not serve, so auto keeps the chart installable without Gateway API.
*/}}
{{- define "virtual-ingress.routes" -}}
{{- $routes := .Values.gatewayAPI.routes | toString }}
{{- if eq $routes "auto" }}
{{- $routes = ternary "true" "false" (.Capabilities.APIVersions.Has "gateway.networking.k8s.io/v1/HTTPRoute") }}
{{- end }}
{{- $routes }}
{{- end }}

{{/*
variables.kinds of the generate GeneratingPolicies and name ValidatingPolicies (files/cel/generate.yaml,
ingress-name-free.yaml), and vi_kind of the ClusterPolicy rules that serve both kinds, for a VirtualIngress or a
VirtualHTTPRoute.
Call with "VirtualIngress" or "VirtualHTTPRoute".
*/}}
{{- define "virtual-ingress.generatedKinds" -}}
{{- if eq . "VirtualIngress" }}
{{- dict "sourceAPIVersion" "virtual-ingress.io/v1alpha1" "sourceKind" "VirtualIngress" "sourceResource" "virtualingresses" "statusField" "ingress" "generatedAPIVersion" "networking.k8s.io/v1" "generatedKind" "Ingress" "generatedResource" "ingresses" "backReferenceLabel" "virtual-ingress.io/virtualingress" "backend" "backend" | toJson }}
{{- else }}
{{- dict "sourceAPIVersion" "virtual-ingress.io/v1alpha1" "sourceKind" "VirtualHTTPRoute" "sourceResource" "virtualhttproutes" "statusField" "route" "generatedAPIVersion" "gateway.networking.k8s.io/v1" "generatedKind" "HTTPRoute" "generatedResource" "httproutes" "backReferenceLabel" "virtual-ingress.io/virtualhttproute" "backend" "backendRef" | toJson }}
{{- end }}
{{- end }}

{{/*
Values the rule bodies in files/rules read, handed to Kyverno as a context variable (vi_config). Only mutate rules
take it: a generate rule's context may not change on policy update. The CEL policies read the same JSON as a CEL map
literal (variables.config): JSON is valid CEL for a map of strings. statusWriter is the username whose writes of
the Ready condition the resolve policies keep; servicesCache and virtualIngressesCache name the GlobalContextEntries the
policies read Services and VirtualIngresses from.
*/}}
{{- define "virtual-ingress.config" -}}
{{- dict "onMultipleMatches" .Values.serviceDiscovery.onMultipleMatches "statusWriter" (include "virtual-ingress.controllerUsername" .) "servicesCache" (include "virtual-ingress.servicesCache" .) "virtualIngressesCache" (include "virtual-ingress.virtualIngressesCache" .) | toJson }}
{{- end }}
