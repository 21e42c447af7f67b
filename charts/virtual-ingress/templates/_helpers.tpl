{{/*
Chart name, truncated to the 63 characters a label value allows.
*/}}
{{- define "virtual-ingress.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Prefix for cluster-scoped object names (policies, ClusterRoles). Cluster-scoped names must be unique per cluster,
so two releases of this chart would otherwise collide.
*/}}
{{- define "virtual-ingress.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "virtual-ingress.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "virtual-ingress.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "virtual-ingress.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Standard labels (helm.sh best practice) on every object the chart renders.
*/}}
{{- define "virtual-ingress.labels" -}}
helm.sh/chart: {{ include "virtual-ingress.chart" . }}
app.kubernetes.io/name: {{ include "virtual-ingress.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: virtual-ingress
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The Kubernetes match block shared by every rule that acts on user namespaces: kinds plus the namespace restrictions
from values. Only mutate rules use it; generate rules must not, because Kyverno forbids changing a generate rule's
match on policy update (it would break `helm upgrade`).
Call with (dict "kinds" (list ...) "operations" (list ...) "Values" .Values).
*/}}
{{- define "virtual-ingress.match" -}}
any:
- resources:
    kinds:
    {{- toYaml .kinds | nindent 4 }}
    {{- with .operations }}
    operations:
    {{- toYaml . | nindent 4 }}
    {{- end }}
    {{- with .Values.namespaces.include }}
    namespaces:
    {{- toYaml . | nindent 4 }}
    {{- end }}
    {{- with .Values.namespaces.selector }}
    namespaceSelector:
    {{- toYaml . | nindent 6 }}
    {{- end }}
{{- end }}

{{- define "virtual-ingress.exclude" -}}
{{- with .Values.namespaces.exclude }}
any:
- resources:
    namespaces:
    {{- toYaml . | nindent 4 }}
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

{{/*
Name of the GlobalContextEntry through which the resolve policies read Services from Kyverno's informer.
*/}}
{{- define "virtual-ingress.servicesCache" -}}
{{- printf "%s-services" (include "virtual-ingress.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Name of the GlobalContextEntry through which the service-events policies find the VirtualIngresses a Service concerns.
*/}}
{{- define "virtual-ingress.virtualIngressesCache" -}}
{{- printf "%s-virtualingresses" (include "virtual-ingress.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of the chart's Kyverno policies: the common labels, and Kyverno's opt-out of policy reports unless
policy.reports asks for them.
*/}}
{{- define "virtual-ingress.policyLabels" -}}
{{ include "virtual-ingress.labels" . }}
{{- if not .Values.policy.reports }}
reports.kyverno.io/disabled: "true"
{{- end }}
{{- end }}

{{/*
Name of the status controller's Deployment, ServiceAccount and namespaced objects.
*/}}
{{- define "virtual-ingress.controllerName" -}}
{{- printf "%s-controller" (include "virtual-ingress.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The user name the status controller's ServiceAccount authenticates as: the one writer of the Ready condition.
*/}}
{{- define "virtual-ingress.controllerUsername" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "virtual-ingress.controllerName" .) }}
{{- end }}

{{/*
Selector labels of the status controller's pods.
*/}}
{{- define "virtual-ingress.controllerSelectorLabels" -}}
app.kubernetes.io/name: {{ include "virtual-ingress.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: status-controller
{{- end }}

{{/*
One ClusterPolicy rule: the Kyverno rule body from files/rules/<file>.yaml plus match/exclude from values and the
vi_config context variable. Call with (dict "file" "x.yaml" "kinds" (list ...) "operations" (list ...) "root" $), and
"everywhere" true for a rule that ignores the namespace restrictions (as the generate rule does). With "source"
("VirtualIngress" or "VirtualHTTPRoute"), a rule that serves both kinds gets the vi_kind context variable (what
virtual-ingress.generatedKinds says of that kind, and the GlobalContextEntry of its objects as "cache"); a rule
whose file reads vi_generated_name gets it (virtual-ingress.generatedNameJMESPath); with
"prelude", the context entries of files/rules/<prelude> (entries several rules share) come before the rule's own;
"name" renames the rule; "skipWhen", a JMESPath, is a first precondition that skips the rule where it holds.
*/}}
{{- define "virtual-ingress.rule" -}}
{{- $root := .root }}
{{- $text := $root.Files.Get (printf "files/rules/%s" .file) }}
{{- $rule := $text | fromYaml }}
{{- $context := list (dict "name" "vi_config" "variable" (dict "value" (include "virtual-ingress.config" $root | fromJson))) }}
{{- with .source }}
{{- $kind := include "virtual-ingress.generatedKinds" . | fromJson }}
{{- $_ := set $kind "cache" (ternary (include "virtual-ingress.virtualHTTPRoutesCache" $root) (include "virtual-ingress.virtualIngressesCache" $root) (eq . "VirtualHTTPRoute")) }}
{{- $context = append $context (dict "name" "vi_kind" "variable" (dict "value" $kind)) }}
{{- end }}
{{- if contains "vi_generated_name" $text }}
{{- $context = append $context (dict "name" "vi_generated_name" "variable" (dict "value" (include "virtual-ingress.generatedNameJMESPath" $root))) }}
{{- end }}
{{- with .prelude }}
{{- $context = concat $context (($root.Files.Get (printf "files/rules/%s" .) | fromYaml).context) }}
{{- end }}
{{- $_ := set $rule "context" (concat $context ($rule.context | default list)) }}
{{- with .name }}
{{- $_ = set $rule "name" . }}
{{- end }}
{{- $values := ternary (dict "namespaces" (dict)) $root.Values (.everywhere | default false) }}
{{- with .skipWhen }}
{{- $preconditions := $rule.preconditions | default dict }}
{{- $_ := set $preconditions "all" (prepend ($preconditions.all | default list) (dict "key" (printf "{{ %s }}" .) "operator" "Equals" "value" false)) }}
{{- $_ = set $rule "preconditions" $preconditions }}
{{- end }}
{{- $_ = set $rule "match" (include "virtual-ingress.match" (dict "kinds" .kinds "operations" .operations "Values" $values) | fromYaml) }}
{{- with include "virtual-ingress.exclude" (dict "Values" $values) | fromYaml }}
{{- $_ = set $rule "exclude" . }}
{{- end }}
{{- list $rule | toYaml }}
{{- end }}

{{/*
Kyverno expression for the labels or annotations of the VirtualIngress without the excluded keys.
Call with (dict "field" "labels" "excluded" (list ...)). Returns the JMESPath only (no braces).
Kyverno substitutes variables inside the values a variable returns, so a value holding "{{ request.userInfo.username }}"
would reach the Ingress evaluated. Each value's "{{" is escaped as "\{{", which Kyverno leaves alone and then unescapes:
values arrive verbatim (an existing "\{{" too). The braces are written as JSON escapes: a literal brace inside the
expression would end Kyverno's variable early.
*/}}
{{- define "virtual-ingress.filteredMetadata" -}}
{{- $items := printf "items(request.object.metadata.%s || `{}`, 'k', 'v')[?!contains(`%s`, k)]" .field (toJson (.excluded | default list)) -}}
object_from_lists({{ $items }}.k, map(&replace_all(@, `"\u007b\u007b"`, `"\\\u007b\u007b"`), {{ $items }}.v))
{{- end }}

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
namespaceSelector of the CEL policies: the same restrictions as the ClusterPolicies' namespaces/exclude blocks, written
on the kubernetes.io/metadata.name label the API server sets on every Namespace.
*/}}
{{- define "virtual-ingress.namespaceSelector" -}}
{{- $expressions := list }}
{{- with .Values.namespaces.include }}
{{- $expressions = append $expressions (dict "key" "kubernetes.io/metadata.name" "operator" "In" "values" .) }}
{{- end }}
{{- with .Values.namespaces.exclude }}
{{- $expressions = append $expressions (dict "key" "kubernetes.io/metadata.name" "operator" "NotIn" "values" .) }}
{{- end }}
{{- $expressions = concat $expressions (.Values.namespaces.selector.matchExpressions | default list) }}
{{- $selector := dict }}
{{- with .Values.namespaces.selector.matchLabels }}
{{- $_ := set $selector "matchLabels" . }}
{{- end }}
{{- with $expressions }}
{{- $_ := set $selector "matchExpressions" . }}
{{- end }}
{{- toYaml $selector }}
{{- end }}

{{/*
matchConstraints of a CEL policy: one resource rule plus, when "root" is given, the namespace restrictions from values.
Call with (dict "group" "" "version" "v1" "resource" "services" "operations" (list ...) "root" $).
*/}}
{{- define "virtual-ingress.celMatch" -}}
resourceRules:
- apiGroups: [{{ .group | quote }}]
  apiVersions: [{{ .version }}]
  resources: [{{ .resource }}]
  operations: {{ toJson .operations }}
{{- with .root }}
{{- with include "virtual-ingress.namespaceSelector" . | fromYaml }}
namespaceSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The spec fields of a CEL policy kept in files/cel/<file>.yaml, with variables.config (the chart values the rules read),
variables.generatedName when the file reads it (virtual-ingress.generatedNameCEL), one variable per entry of .lists
(name -> list of strings) and of .maps (name -> map of strings), and the variables of files/cel/<prelude> (variables
several policies share) prepended to its variables. The lists are separate variables because CEL rejects a map literal whose
values differ in type.
*/}}
{{- define "virtual-ingress.celSpec" -}}
{{- $text := .root.Files.Get (printf "files/cel/%s" .file) }}
{{- $spec := $text | fromYaml }}
{{- $values := list (dict "name" "config" "expression" (include "virtual-ingress.config" .root)) }}
{{- if contains "variables.generatedName" $text }}
{{- $values = append $values (dict "name" "generatedName" "expression" (include "virtual-ingress.generatedNameCEL" .root)) }}
{{- end }}
{{- range $name, $value := .lists | default dict }}
{{- $values = append $values (dict "name" $name "expression" (toJson ($value | default list))) }}
{{- end }}
{{- range $name, $value := .maps | default dict }}
{{- $values = append $values (dict "name" $name "expression" (toJson $value)) }}
{{- end }}
{{- with .prelude }}
{{- $values = concat $values (($.root.Files.Get (printf "files/cel/%s" .) | fromYaml).variables) }}
{{- end }}
{{- $_ := set $spec "variables" (concat $values ($spec.variables | default list)) }}
{{- toYaml $spec }}
{{- end }}

{{/*
A list of annotation globs (`*` matches any characters) as a CEL list literal of anchored regular expressions.
JSON string literals are CEL string literals.
*/}}
{{- define "virtual-ingress.globRegexes" -}}
{{- $regexes := list }}
{{- range . }}
{{- $regexes = append $regexes (printf "^%s$" (regexQuoteMeta . | replace "\\*" ".*")) }}
{{- end }}
{{- toJson $regexes }}
{{- end }}

{{/*
CEL: the names of the VirtualIngresses (VirtualHTTPRoutes) a Service event concerns, from Kyverno's informer of them
(the GlobalContextEntry .cache; null when Kyverno has not loaded it): those of the Service's namespace with a
matchLabels backend the Service matches, or whose status names it. Call with (dict "root" $ "cache" NAME "old" true)
where `oldObject` is declared: the Service is then `oldObject`
for a DELETE and its labels before the change count too. Kyverno's CLI declares neither `oldObject` nor `request` in
a target expression, where the Service is `object` for every operation.
*/}}
{{- define "virtual-ingress.celConcerned" -}}
{{- if .old }}
cel.bind(svc, object != null ? object : oldObject,
cel.bind(labels, object != null ? object.?metadata.?labels.orValue({}) : {},
cel.bind(oldLabels, oldObject != null ? oldObject.?metadata.?labels.orValue({}) : labels,
{{- else }}
cel.bind(svc, object,
cel.bind(labels, object.?metadata.?labels.orValue({}),
cel.bind(oldLabels, labels,
{{- end }}
cel.bind(vis, globalContext.Get({{ .cache | quote }}, ""),
  vis == null ? dyn(null) : dyn(dyn(vis).filter(vi, vi.metadata.?namespace.orValue("") == svc.metadata.namespace && (
    ({{ include "virtual-ingress.celSelectors" "vi" }})
      .exists(sel, sel.size() > 0 && (
        sel.all(k, k in labels && labels[k] == sel[k]) || sel.all(k, k in oldLabels && oldLabels[k] == sel[k])))
    || vi.?status.?backends.orValue([]).exists(b, b.?service.orValue("") == svc.metadata.name)))
    .map(vi, vi.metadata.name))))))
{{- end }}

{{/*
Which writes the resolve policies skip, in both engines: the status controller's report of its verdict. That update
changes only the Ready condition (and a route's parents), which the policies keep from the controller anyway, so
nothing resolution depends on changed; skipping it spares Kyverno a resolution (every selector against the Services of
the namespace) per report. Only a write that changes nothing else is skipped: the spec, the labels and the rest of
status must be as stored (the admission policy <fullname>-virtualingress-writes keeps the controller off the spec and
annotations), so that the controller's token cannot put a status.ingress (status.route) of its own making in front of
the generate policy. A repair (status.lastServiceEvent changed) resolves like any other write.
The ClusterPolicy engine reads the JMESPath as a precondition of each resolve rule (true: the write is a report), the
MutatingPolicies the CEL as matchConditions (true: the write is resolved). The JMESPath compares JSON text: after
each rule Kyverno puts the object back into request.object as decoded from the admission review (whole numbers as
integers) while request.oldObject holds floats, and JMESPath tells those apart, so that a plain comparison would skip
the first rule only and let the others append to a status that was not started afresh.
*/}}
{{- define "virtual-ingress.statusReportJMESPath" -}}
request.operation == 'UPDATE' && (request.userInfo.username || '') == vi_config.statusWriter
  && to_string([request.object.spec, request.object.metadata.labels || `{}`,
      merge(request.object.status || `{}`, {conditions: request.object.status.conditions[?type != 'Ready'] || `[]`, parents: `null`})])
    == to_string([request.oldObject.spec, request.oldObject.metadata.labels || `{}`,
      merge(request.oldObject.status || `{}`, {conditions: request.oldObject.status.conditions[?type != 'Ready'] || `[]`, parents: `null`})])
{{- end }}

{{- define "virtual-ingress.resolveMatchConditions" -}}
- name: not-a-status-report
  expression: >-
    request.operation != "UPDATE" || oldObject == null
    || request.userInfo.?username.orValue("") != {{ include "virtual-ingress.controllerUsername" . | quote }}
    || object.?spec.orValue({}) != oldObject.?spec.orValue({})
    || object.metadata.?labels.orValue({}) != oldObject.metadata.?labels.orValue({})
    || object.?status.orValue({}).transformMap(k, v, k != "conditions" && k != "parents", v)
      != oldObject.?status.orValue({}).transformMap(k, v, k != "conditions" && k != "parents", v)
    || object.?status.?conditions.orValue([]).filter(c, c.?type.orValue("") != "Ready")
      != oldObject.?status.?conditions.orValue([]).filter(c, c.?type.orValue("") != "Ready")
{{- end }}

{{/*
Which updates of a VirtualIngress (VirtualHTTPRoute) make a generation request, in both engines: those that change
what the generated object is made of (status.ingress or status.route, labels, annotations), and repairs (the status
controller changes status.lastServiceEvent and nothing else, so status.serviceEvent stays). Everything else generates
nothing:
- the status controller's report of its verdict (the Ready condition): otherwise one request per report, and each
  request makes Kyverno's background controller read every object of the kind in the namespace;
- a Service event that did not change status.ingress (a Service deleted while its Ingress is kept, or an event that
  changed nothing): in a burst of Service recreations that halves the requests competing for Kyverno's queue
  (updateRequestThreshold);
- a client's update that leaves all of that as it was.
An Ingress that diverged anyway is the status controller's to repair. Creations always generate, and so do Kyverno's
background re-evaluations (no stored object to compare with).
The ClusterPolicy engine reads this as a precondition, which may not name request.userInfo in a background rule and
makes Kyverno check the stored object too when it turns false: unchanged as well, so the rule is skipped and nothing
is deleted. The GeneratingPolicy reads it as matchConditions. Call with (dict "status" "ingress") (or "route").
The status field is compared as JSON text: when the preconditions turn false Kyverno puts the stored object in
request.object as decoded from the API (whole numbers as integers) while request.oldObject holds the same object
decoded from the admission review (numbers as floats), and JMESPath tells those apart: a port number would make every
skipped update delete the Ingress.
*/}}
{{- define "virtual-ingress.generateUpdatesJMESPath" -}}
{{- $s := printf "status.%s" .status -}}
{{ "{{" }} request.operation != 'UPDATE'
  || to_string(request.object.{{ $s }}) != to_string(request.oldObject.{{ $s }})
  || request.object.metadata.labels != request.oldObject.metadata.labels
  || request.object.metadata.annotations != request.oldObject.metadata.annotations
  || ((request.object.status.lastServiceEvent || '') != (request.oldObject.status.lastServiceEvent || '')
    && request.object.status.serviceEvent == request.oldObject.status.serviceEvent) {{ "}}" }}
{{- end }}

{{- define "virtual-ingress.generateMatchConditions" -}}
- name: changes-the-generated-object
  expression: >-
    request.operation != "UPDATE" || oldObject == null
    || object.?status.?{{ .status }}.orValue({}) != oldObject.?status.?{{ .status }}.orValue({})
    || object.metadata.?labels.orValue({}) != oldObject.metadata.?labels.orValue({})
    || object.metadata.?annotations.orValue({}) != oldObject.metadata.?annotations.orValue({})
    || (object.?status.?lastServiceEvent.orValue("") != oldObject.?status.?lastServiceEvent.orValue("")
      && object.?status.?serviceEvent.orValue({}) == oldObject.?status.?serviceEvent.orValue({}))
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
CEL: the matchLabels selectors of the VirtualIngress or VirtualHTTPRoute named by the argument (a CEL variable), one
map per backend ({} for a backend that names its Service). The fields of both kinds are read, so that one expression
serves both: a VirtualIngress has no backendRefs, a VirtualHTTPRoute no http.paths.
*/}}
{{- define "virtual-ingress.celSelectors" -}}
[{{ . }}.spec.?defaultBackend.?service.?matchLabels.orValue({})]
      + {{ . }}.spec.?rules.orValue([]).map(r, r.?http.?paths.orValue([]).map(p, p.backend.?service.?matchLabels.orValue({}))
        + r.?backendRefs.orValue([]).map(b, b.?matchLabels.orValue({}))).flatten()
{{- end }}

{{/*
Name of the GlobalContextEntry through which the service-events policies find the VirtualHTTPRoutes a Service concerns.
*/}}
{{- define "virtual-ingress.virtualHTTPRoutesCache" -}}
{{- printf "%s-virtualhttproutes" (include "virtual-ingress.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

