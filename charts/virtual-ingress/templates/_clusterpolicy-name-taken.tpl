{{/*
The name ClusterPolicy of the clusterPolicy engine for one kind: call with (dict "root" $ "source" "VirtualIngress")
or "VirtualHTTPRoute".
*/}}
{{- define "virtual-ingress.namePolicy" -}}
{{- $kinds := include "virtual-ingress.generatedKinds" .source | fromJson }}
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: {{ include "virtual-ingress.fullname" .root }}-{{ ternary "route" "ingress" (eq .source "VirtualHTTPRoute") }}-name
  labels:
    {{- include "virtual-ingress.policyLabels" .root | nindent 4 }}
  annotations:
    policies.kyverno.io/title: Never take over an {{ $kinds.generatedKind }}
    policies.kyverno.io/category: virtual-ingress
    policies.kyverno.io/subject: {{ .source }}, {{ $kinds.generatedKind }}
    policies.kyverno.io/description: >-
      Refuses a {{ .source }} whose {{ $kinds.generatedKind }} name is held by an {{ $kinds.generatedKind }} that was not
      generated from it. Everywhere, like the generate policy, whatever the namespace restrictions.
spec:
  admission: true
  background: false
  failurePolicy: {{ .root.Values.policy.failurePolicy }}
  webhookTimeoutSeconds: {{ .root.Values.policy.webhookTimeoutSeconds }}
  rules:
  {{- include "virtual-ingress.rule" (dict "file" "ingress-name-free.yaml" "name" (printf "%s-name-free" (lower $kinds.generatedKind)) "source" .source "kinds" (list (printf "virtual-ingress.io/v1alpha1/%s" .source)) "operations" (list "CREATE" "UPDATE") "everywhere" true "root" .root) | nindent 2 }}
{{- end }}
