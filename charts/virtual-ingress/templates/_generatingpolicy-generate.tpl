{{/*
The generate GeneratingPolicy of the generatingPolicy engine for one kind: call with (dict "root" $ "source"
"VirtualIngress") or "VirtualHTTPRoute". Both kinds share files/cel/generate.yaml, told the kind through
variables.kinds.

Named like the ClusterPolicy engine's generate policy on purpose: Kyverno updates an existing downstream only when its
generate.kyverno.io/policy-name label names the policy (and its trigger-uid the source), so the same name is what lets
either engine adopt the objects the other one generated when `helm upgrade` switches policy.engine.
*/}}
{{- define "virtual-ingress.generateGeneratingPolicy" -}}
{{- $root := .root }}
{{- $route := eq .source "VirtualHTTPRoute" }}
{{- $kinds := include "virtual-ingress.generatedKinds" .source | fromJson }}
{{- $generated := $kinds.generatedKind }}
{{- $generatedPlural := ternary "HTTPRoutes" "Ingresses" $route }}
{{- $sources := ternary "VirtualHTTPRoutes" "VirtualIngresses" $route }}
{{- $values := $root.Values.generatedIngress }}
apiVersion: policies.kyverno.io/v1
kind: GeneratingPolicy
metadata:
  name: {{ include "virtual-ingress.fullname" $root }}-generate{{ ternary "-routes" "" $route }}
  labels:
    {{- include "virtual-ingress.policyLabels" $root | nindent 4 }}
  annotations:
    policies.kyverno.io/title: Generate {{ $generatedPlural }} from {{ $sources }}
    policies.kyverno.io/category: virtual-ingress
    policies.kyverno.io/subject: {{ .source }}, {{ $generated }}
    policies.kyverno.io/description: >-
      Keeps one {{ $kinds.generatedAPIVersion }} {{ $generated }} per resolved {{ .source }}, owned by it, with the {{ .source }}'s
      labels and annotations (minus the excluded ones) and the spec from status.{{ $kinds.statusField }}.
spec:
  webhookConfiguration:
    timeoutSeconds: {{ $root.Values.policy.webhookTimeoutSeconds }}
  evaluation:
    admission:
      enabled: true
    # Off on purpose: with it, every start of Kyverno's background controller (a restart, an upgrade, a new leader)
    # queues one request per {{ .source }} of the cluster, and real Service events wait behind them for minutes. Nothing
    # needs it: an {{ $generated }} the other engine generated keeps serving and is taken over at the next write of its
    # {{ .source }} or Service event, and a resolved {{ .source }} without one is repaired by the status controller.
    generateExisting:
      enabled: false
    # Off on purpose. Kyverno 1.19's GeneratingPolicy synchronization watches the {{ $generatedPlural }} and, racing with its own
    # update of one, can write the previous version back (the {{ $generated }} then trails its {{ .source }} by one change).
    # Every write of a {{ .source }} still updates its {{ $generated }}, and garbage collection (ownerReference) deletes it
    # with the {{ .source }}; what is lost is the restore of an {{ $generated }} edited or deleted by hand, which happens at
    # the next change of the {{ .source }} instead. With synchronization off, Kyverno never deletes {{ $generatedPlural }} when
    # the policy goes, whatever policy.orphanIngressesOnUninstall says.
    synchronize:
      enabled: false
    # Service changes reach this policy as updates of the {{ .source }} made by Kyverno's background controller (the
    # service-events policy's touch); those must generate too.
    skipBackgroundRequests: false
  # No namespace restrictions here, as in the ClusterPolicy engine's generate rule: they apply to resolution, and a
  # {{ .source }} outside them keeps its {{ $generated }} (in its last state) rather than losing it.
  matchConstraints:
    {{- include "virtual-ingress.celMatch" (dict "group" "virtual-ingress.io" "version" "v1alpha1" "resource" $kinds.sourceResource "operations" (list "CREATE" "UPDATE")) | nindent 4 }}
  matchConditions:
  {{- include "virtual-ingress.generateMatchConditions" (dict "root" $root "status" $kinds.statusField) | nindent 2 }}
  {{- include "virtual-ingress.celSpec" (dict "file" "generate.yaml" "root" $root "maps" (dict "kinds" $kinds) "lists" (dict "excludedLabels" (append $values.excludedLabels "virtual-ingress.io/name-hash") "excludedAnnotations" $values.excludedAnnotations)) | nindent 2 }}
{{- end }}
