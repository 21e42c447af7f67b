{{/*
The resolve ClusterPolicy of the clusterPolicy engine for one kind: call with (dict "root" $ "source" "VirtualIngress")
or "VirtualHTTPRoute". The rules that do not depend on the kind's spec (status reset, conditions, name hash) are the
same files for both, told the kind through vi_kind; resolving and rendering walk each kind's own backends.
*/}}
{{- define "virtual-ingress.resolvePolicy" -}}
{{- $root := .root }}
{{- $route := eq .source "VirtualHTTPRoute" }}
{{- $kinds := list (printf "virtual-ingress.io/v1alpha1/%s" .source) }}
{{- $ops := list "CREATE" "UPDATE" }}
{{- $rules := list
  (dict "file" "reset-status.yaml" "source" .source)
  (dict "file" (ternary "resolve-backendrefs.yaml" "resolve-backends.yaml" $route) "prelude" "services.yaml")
  (dict "file" (ternary "render-route.yaml" "render-ingress.yaml" $route))
  (dict "file" "conditions.yaml" "source" .source)
  (dict "file" "name-hash.yaml") }}
apiVersion: kyverno.io/v1
kind: ClusterPolicy
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
      backendRef resolves to, and the HTTPRoute spec the generate policy copies. Mutate rules only, so every value of
      the chart may change.
    {{- else }}
    policies.kyverno.io/title: Resolve VirtualIngress backends
    policies.kyverno.io/category: virtual-ingress
    policies.kyverno.io/subject: VirtualIngress
    policies.kyverno.io/description: >-
      Computes the status of every VirtualIngress on each write: which Service each matchLabels backend resolves to,
      and the Ingress spec the generate policy copies. Mutate rules only, so every value of the chart may change.
    {{- end }}
spec:
  admission: true
  background: false
  failurePolicy: {{ $root.Values.policy.failurePolicy }}
  webhookTimeoutSeconds: {{ $root.Values.policy.webhookTimeoutSeconds }}
  rules:
  {{- range $rules }}
  {{- include "virtual-ingress.rule" (merge (dict "kinds" $kinds "operations" $ops "root" $root "skipWhen" (include "virtual-ingress.statusReportJMESPath" $root)) .) | nindent 2 }}
  {{- end }}
{{- end }}
