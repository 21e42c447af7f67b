{{/*
JMESPath fragments of the ClusterPolicy engine: one rule from files/rules with its match, exclude and context, and
the copy of labels and annotations that Kyverno cannot substitute into.
*/}}

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
