{{/*
The name ValidatingPolicy of the generatingPolicy engine for one kind: call with (dict "root" $ "source"
"VirtualIngress") or "VirtualHTTPRoute". Refuses a source whose generated object's name is held by one that was not
generated from it (files/cel/ingress-name-free.yaml, told the kind through variables.kinds).
*/}}
{{- define "virtual-ingress.nameValidatingPolicy" -}}
{{- $root := .root }}
{{- $kinds := include "virtual-ingress.generatedKinds" .source | fromJson }}
{{- $accounts := $root.Values.rbac.kyvernoServiceAccounts }}
{{- $sources := ternary "VirtualHTTPRoutes" "VirtualIngresses" (eq .source "VirtualHTTPRoute") }}
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: {{ include "virtual-ingress.fullname" $root }}-{{ ternary "route" "ingress" (eq .source "VirtualHTTPRoute") }}-name
  labels:
    {{- include "virtual-ingress.policyLabels" $root | nindent 4 }}
  annotations:
    policies.kyverno.io/title: Never take over an {{ $kinds.generatedKind }}
    policies.kyverno.io/category: virtual-ingress
    policies.kyverno.io/subject: {{ .source }}, {{ $kinds.generatedKind }}
    policies.kyverno.io/description: >-
      Refuses a {{ .source }} whose {{ $kinds.generatedKind }} name is held by an {{ $kinds.generatedKind }} that was not generated from it. Everywhere,
      like the generate policy, whatever the namespace restrictions.
spec:
  validationActions: [Deny]
  failurePolicy: {{ $root.Values.policy.failurePolicy }}
  webhookConfiguration:
    timeoutSeconds: {{ $root.Values.policy.webhookTimeoutSeconds }}
  evaluation:
    admission:
      enabled: true
    background:
      enabled: false
  matchConstraints:
    {{- include "virtual-ingress.celMatch" (dict "group" "virtual-ingress.io" "version" "v1alpha1" "resource" $kinds.sourceResource "operations" (list "CREATE" "UPDATE")) | nindent 4 }}
  # Not for the status writers' updates (the status controller's, and Kyverno's touch): they cannot change the name,
  # and this engine's generator leaves an {{ $kinds.generatedKind }} it does not control alone whoever writes; the status controller
  # reports {{ $kinds.generatedKind }}NameTaken. Each check is a live read of the {{ $kinds.generatedKind }}, which at a thousand {{ $sources }} is most
  # of this policy's cost.
  matchConditions:
  - name: not-a-status-writers-update
    expression: >-
      request.operation != "UPDATE"
      || !(request.userInfo.?username.orValue("") in [
        {{- include "virtual-ingress.controllerUsername" $root | quote }}
        {{- if $accounts.backgroundController }}, {{ printf "system:serviceaccount:%s:%s" $accounts.namespace $accounts.backgroundController | quote }}{{ end }}])
  {{- include "virtual-ingress.celSpec" (dict "file" "ingress-name-free.yaml" "root" $root "maps" (dict "kinds" $kinds)) | nindent 2 }}
{{- end }}
