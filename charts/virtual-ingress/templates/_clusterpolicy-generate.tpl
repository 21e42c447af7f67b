{{/*
The generate ClusterPolicy of the clusterPolicy engine for one kind: call with (dict "root" $ "source" "VirtualIngress")
or "VirtualHTTPRoute".

The generate rule copies status.ingress.spec (status.route.spec), which the resolve policy computes. It has no context
and its match and preconditions do not depend on values: Kyverno rejects a policy update that changes those fields of a
generate rule, so keeping them fixed is what makes every `helm upgrade` of this chart acceptable. Values reach it only
through `data` and `generate` fields, which Kyverno allows to change (and then re-syncs every generated object).

Kyverno substitutes variables inside the values a variable returns, so every copied value has its "{{" escaped (see
virtual-ingress.filteredMetadata): the metadata's values, and a route's spec, whose strings (header values, paths,
redirects) are the user's. An Ingress spec cannot hold braces (the VirtualIngress CRD refuses them in paths, and its
other strings are names), so it is copied as it is.
*/}}
{{- define "virtual-ingress.generatePolicy" -}}
{{- $root := .root }}
{{- $route := eq .source "VirtualHTTPRoute" }}
{{- $kinds := include "virtual-ingress.generatedKinds" .source | fromJson }}
{{- $field := printf "request.object.status.%s.spec" $kinds.statusField }}
{{- $values := $root.Values.generatedIngress }}
{{- $labels := include "virtual-ingress.filteredMetadata" (dict "field" "labels" "excluded" (append $values.excludedLabels "virtual-ingress.io/name-hash")) }}
{{- $annotations := include "virtual-ingress.filteredMetadata" (dict "field" "annotations" "excluded" $values.excludedAnnotations) }}
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: {{ include "virtual-ingress.fullname" $root }}-generate{{ ternary "-routes" "" $route }}
  labels:
    {{- include "virtual-ingress.policyLabels" $root | nindent 4 }}
  annotations:
    policies.kyverno.io/title: {{ ternary "Generate HTTPRoutes from VirtualHTTPRoutes" "Generate Ingresses from VirtualIngresses" $route }}
    policies.kyverno.io/category: virtual-ingress
    policies.kyverno.io/subject: {{ .source }}, {{ $kinds.generatedKind }}
    policies.kyverno.io/description: >-
      Keeps one {{ $kinds.generatedAPIVersion }} {{ $kinds.generatedKind }} per resolved {{ .source }}, owned by it,
      with the {{ .source }}'s labels and annotations (minus the excluded ones) and the spec from
      status.{{ $kinds.statusField }}.
spec:
  admission: true
  background: true
  failurePolicy: {{ $root.Values.policy.failurePolicy }}
  webhookTimeoutSeconds: {{ $root.Values.policy.webhookTimeoutSeconds }}
  rules:
  - name: generate-{{ lower $kinds.generatedKind }}
    # Service changes reach this rule as updates of the {{ .source }} made by Kyverno's background controller (the
    # service-events policy's touch); those must generate too.
    skipBackgroundRequests: false
    match:
      any:
      - resources:
          kinds:
          - {{ $kinds.sourceAPIVersion }}/{{ .source }}
    preconditions:
      all:
      # Only once every backend has resolved at least once; the rendered status is never cleared after that, so this
      # never turns false for a source that has a generated object (Kyverno would delete a synchronized downstream).
      - key: {{ printf "{{ length(%s || `{}`) }}" $field | quote }}
        operator: GreaterThan
        value: 0
      # An update that changes nothing the {{ $kinds.generatedKind }} is made of generates nothing (see virtual-ingress.generateUpdatesJMESPath).
      - key: >-
          {{- include "virtual-ingress.generateUpdatesJMESPath" (dict "status" $kinds.statusField) | nindent 10 }}
        operator: Equals
        value: true
    generate:
      # Off for the reason the generatingPolicy engine's is (see virtual-ingress.generateGeneratingPolicy): a pass over
      # every {{ .source }} at each start of Kyverno's background controller (Kyverno lets an upgrade change this field).
      # The start still re-syncs every generated {{ $kinds.generatedKind }} (synchronize, without which Kyverno would never
      # update one).
      generateExisting: false
      synchronize: true
      orphanDownstreamOnPolicyDelete: {{ $root.Values.policy.orphanIngressesOnUninstall }}
      apiVersion: {{ $kinds.generatedAPIVersion }}
      kind: {{ $kinds.generatedKind }}
      name: {{ include "virtual-ingress.generatedNameJMESPath" $root | quote }}
      namespace: {{ `"{{ request.object.metadata.namespace }}"` }}
      data:
        metadata:
          labels: {{ printf "{{ merge(%s, {\"%s\": request.object.metadata.name}) }}" $labels $kinds.backReferenceLabel | quote }}
          annotations: {{ printf "{{ %s }}" $annotations | quote }}
          ownerReferences:
          - apiVersion: {{ $kinds.sourceAPIVersion }}
            kind: {{ .source }}
            name: {{ `"{{ request.object.metadata.name }}"` }}
            uid: {{ `"{{ request.object.metadata.uid }}"` }}
            controller: true
            blockOwnerDeletion: true
        {{- if $route }}
        spec: {{ printf "{{ parse_json(replace_all(to_string(%s), `\"\\u007b\\u007b\"`, `\"\\\\\\\\\\u007b\\u007b\"`)) }}" $field | quote }}
        {{- else }}
        spec: {{ printf "{{ %s }}" $field | quote }}
        {{- end }}
{{- end }}
