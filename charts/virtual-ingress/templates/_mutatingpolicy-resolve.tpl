{{/*
The resolve MutatingPolicy of the generatingPolicy engine for one kind: call with (dict "root" $ "source"
"VirtualIngress") or "VirtualHTTPRoute". Each kind walks its own backends (files/cel/resolve.yaml,
resolve-route.yaml) over the same Services (files/cel/services.yaml).
*/}}
{{- define "virtual-ingress.resolveMutatingPolicy" -}}
{{- $root := .root }}
{{- $route := eq .source "VirtualHTTPRoute" }}
{{- $kinds := include "virtual-ingress.generatedKinds" .source | fromJson }}
apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata:
  name: {{ include "virtual-ingress.fullname" $root }}-resolve{{ ternary "-routes" "" $route }}
  labels:
    {{- include "virtual-ingress.policyLabels" $root | nindent 4 }}
  annotations:
    {{- if $route }}
    policies.kyverno.io/title: Resolve VirtualHTTPRoute backendRefs
    policies.kyverno.io/category: virtual-ingress
    policies.kyverno.io/subject: VirtualHTTPRoute
    policies.kyverno.io/description: >-
      Computes the status of every VirtualHTTPRoute on each write: which Service (and port number) each matchLabels
      backendRef resolves to, and the HTTPRoute spec the generate policy copies.
    {{- else }}
    policies.kyverno.io/title: Resolve VirtualIngress backends
    policies.kyverno.io/category: virtual-ingress
    policies.kyverno.io/subject: VirtualIngress
    policies.kyverno.io/description: >-
      Computes the status of every VirtualIngress on each write: which Service each matchLabels backend resolves to,
      and the Ingress spec the generate policy copies.
    {{- end }}
spec:
  failurePolicy: {{ $root.Values.policy.failurePolicy }}
  webhookConfiguration:
    timeoutSeconds: {{ $root.Values.policy.webhookTimeoutSeconds }}
  evaluation:
    admission:
      enabled: true
    # Status is computed on writes only; Service changes reach {{ ternary "VirtualHTTPRoutes" "VirtualIngresses" $route }} through the service-events policy.
    background:
      enabled: false
    # The service-events policy's touch is an update by Kyverno's background controller; it must be resolved too.
    skipBackgroundRequests: false
  matchConstraints:
    {{- include "virtual-ingress.celMatch" (dict "group" "virtual-ingress.io" "version" "v1alpha1" "resource" $kinds.sourceResource "operations" (list "CREATE" "UPDATE") "root" $root) | nindent 4 }}
  matchConditions:
  {{- include "virtual-ingress.resolveMatchConditions" $root | nindent 2 }}
  {{- include "virtual-ingress.celSpec" (dict "file" (ternary "resolve-route.yaml" "resolve.yaml" $route) "prelude" "services.yaml" "root" $root) | nindent 2 }}
{{- end }}
