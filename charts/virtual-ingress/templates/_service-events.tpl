{{/*
The service-events MutatingPolicy of the generatingPolicy engine for one kind: call with (dict "root" $ "kind"
"VirtualIngress") or "VirtualHTTPRoute". A policy's targets are of one resource, hence one policy per kind.
*/}}
{{- define "virtual-ingress.serviceEventsPolicy" -}}
{{- $root := .root }}
{{- $route := eq .kind "VirtualHTTPRoute" }}
{{- $suffix := ternary "-routes" "" $route }}
{{- $generated := ternary "HTTPRoute" "Ingress" $route }}
{{- $plural := ternary "VirtualHTTPRoutes" "VirtualIngresses" $route }}
{{- $resource := ternary "virtualhttproutes" "virtualingresses" $route }}
{{- $cache := ternary (include "virtual-ingress.virtualHTTPRoutesCache" $root) (include "virtual-ingress.virtualIngressesCache" $root) $route }}
apiVersion: policies.kyverno.io/v1
kind: MutatingPolicy
metadata:
  name: {{ include "virtual-ingress.fullname" $root }}-service-events{{ $suffix }}
  labels:
    {{- include "virtual-ingress.policyLabels" $root | nindent 4 }}
  annotations:
    policies.kyverno.io/title: Re-resolve {{ $plural }} on Service changes
    policies.kyverno.io/category: virtual-ingress
    policies.kyverno.io/subject: Service
    policies.kyverno.io/description: >-
      When a Service is created, relabelled or deleted, touches the {{ $plural }} in its namespace that select or
      use it, so that they are re-resolved and their {{ $generated }} follows.
spec:
  # Service writes (e.g. by the Kubevirt CCM) must never be blocked by this policy: a missed event only delays.
  failurePolicy: Ignore
  webhookConfiguration:
    timeoutSeconds: {{ $root.Values.policy.webhookTimeoutSeconds }}
  evaluation:
    # Admission only records the Service event; the background controller touches the targets.
    admission:
      enabled: true
    background:
      enabled: false
    mutateExisting:
      enabled: true
  matchConstraints:
    {{- include "virtual-ingress.celMatch" (dict "group" "" "version" "v1" "resource" "services" "operations" (list "CREATE" "UPDATE" "DELETE") "root" $root) | nindent 4 }}
    # Whenever this policy is added or changed (every start of Kyverno's background controller, every upgrade of the
    # chart), Kyverno's policy controller makes one request for every Service it matches, as if each had been updated:
    # thousands of requests that nothing happened behind, queued before (and, past Kyverno's threshold, instead of) the
    # real Service events. That sweep skips the Services an exclude rule names without reading the rule's operations.
    # No Service is ever CONNECTed (proxying is the services/proxy subresource), so this rule excludes nothing at
    # admission and every Service from the sweep. (The mutation also ignores a request that looks like the sweep's.)
    excludeResourceRules:
    - apiGroups: [""]
      apiVersions: [v1]
      resources: [services]
      operations: [CONNECT]
  # Only a Service that a VirtualIngress of its namespace selects (before or after the change) or uses makes an
  # UpdateRequest, as judged from Kyverno's informer of VirtualIngresses (the chart's GlobalContextEntry): a burst of
  # Services created before their VirtualIngresses costs nothing and cannot fill Kyverno's queue. Without the entry
  # (not loaded yet) every Service event counts, and targetMatchConditions decide. The informer trails the API server:
  # a VirtualIngress created just before the Service (a GitOps sync applies both within milliseconds) may not be in it
  # yet, and its own resolution found no Service. So when the informer shows none, a Service created, deleted or
  # relabelled asks the API server (one list of the namespace's {{ $plural }}, no UpdateRequest unless one is concerned).
  matchConditions:
  - name: concerns-a-virtualingress
    expression: >-
      cel.bind(concerned,
      {{- include "virtual-ingress.celConcerned" (dict "root" $root "cache" $cache "old" true) | nindent 8 }},
        concerned == null || size(concerned) > 0
        || ((request.operation != "UPDATE" || (oldObject != null
              && object.?metadata.?labels.orValue({}) != oldObject.?metadata.?labels.orValue({})))
          && size(
      {{- include "virtual-ingress.celConcerned" (dict "root" $root "list" (printf `dyn(resource.List("virtual-ingress.io/v1alpha1", %q, (object != null ? object : oldObject).metadata.namespace)).?items.orValue([])` $resource) "old" true) | nindent 10 }}) > 0))
  # The one VirtualIngress a Service event concerns (the usual case: a CCM Service serves one tenant Service), listed by
  # its name-hash label (resource.List selects by labels only; the resolve policy sets the label); otherwise every
  # VirtualIngress of the namespace, and targetMatchConditions keep those this Service concerns. The result must be
  # resource.List's own: Kyverno 1.19 takes no filtered list here. Judged by the Service's labels after the change
  # (see virtual-ingress.celConcerned): a VirtualIngress that only its labels before a relabel matched, and that one
  # other VirtualIngress's selector now matches, is left to the status controller's repair.
  targetMatchConstraints:
    expression: >-
      cel.bind(concerned,
      {{- include "virtual-ingress.celConcerned" (dict "root" $root "cache" $cache) | nindent 8 }},
        concerned != null && size(concerned) == 1
          ? resource.List("virtual-ingress.io/v1alpha1", {{ $resource | quote }}, object.metadata.namespace,
              {"virtual-ingress.io/name-hash": md5(string(concerned[0]))})
          : resource.List("virtual-ingress.io/v1alpha1", {{ $resource | quote }}, object.metadata.namespace))
  # `object` is the VirtualIngress here: one that selects the Service (before or after the change) or uses it.
  targetMatchConditions:
  - name: selects-or-uses-the-service
    expression: >-
      ({{ include "virtual-ingress.celSelectors" "object" | nindent 8 }})
        .exists(sel, sel.size() > 0 && (
          sel.all(k, k in variables.serviceLabels && variables.serviceLabels[k] == sel[k])
          || sel.all(k, k in variables.oldServiceLabels && variables.oldServiceLabels[k] == sel[k])))
      || object.?status.?backends.orValue([]).exists(b, b.?service.orValue("") == request.name)
  {{- include "virtual-ingress.celSpec" (dict "file" "service-events.yaml" "root" $root) | nindent 2 }}
{{- end }}

{{/*
The service-events ClusterPolicy of the clusterPolicy engine for one kind: call with (dict "root" $ "source"
"VirtualIngress") or "VirtualHTTPRoute". One rule serves both kinds (vi_kind says which), one policy per kind, as the
CEL engine has.
*/}}
{{- define "virtual-ingress.serviceEventsClusterPolicy" -}}
{{- $route := eq .source "VirtualHTTPRoute" }}
{{- $plural := ternary "VirtualHTTPRoutes" "VirtualIngresses" $route }}
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: {{ include "virtual-ingress.fullname" .root }}-service-events{{ ternary "-routes" "" $route }}
  labels:
    {{- include "virtual-ingress.policyLabels" .root | nindent 4 }}
  annotations:
    policies.kyverno.io/title: Re-resolve {{ $plural }} on Service changes
    policies.kyverno.io/category: virtual-ingress
    policies.kyverno.io/subject: Service
    policies.kyverno.io/description: >-
      When a Service is created, relabelled or deleted, touches the {{ $plural }} in its namespace that select or
      use it, so that they are re-resolved and their {{ ternary "HTTPRoute" "Ingress" $route }} follows.
spec:
  admission: true
  background: false
  # Service writes (e.g. by the Kubevirt CCM) must never be blocked by this policy: a missed event only delays.
  failurePolicy: Ignore
  webhookTimeoutSeconds: {{ .root.Values.policy.webhookTimeoutSeconds }}
  rules:
  {{- include "virtual-ingress.rule" (dict "file" "service-events.yaml" "source" .source "kinds" (list "Service") "operations" (list "CREATE" "UPDATE" "DELETE") "root" .root) | nindent 2 }}
{{- end }}
