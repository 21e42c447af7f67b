{{/*
CEL fragments of the generatingPolicy engine: matchConstraints and namespaceSelector, a policy's spec from files/cel
with its variables, and the expressions several CEL policies share.
*/}}

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
(the GlobalContextEntry .cache; null when Kyverno has not loaded it), or from .list (a CEL list) when given: those of
the Service's namespace with a
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
cel.bind(vis, {{ if .list }}{{ .list }}{{ else }}globalContext.Get({{ .cache | quote }}, ""){{ end }},
  vis == null ? dyn(null) : dyn(dyn(vis).filter(vi, vi.metadata.?namespace.orValue("") == svc.metadata.namespace && (
    ({{ include "virtual-ingress.celSelectors" "vi" }})
      .exists(sel, sel.size() > 0 && (
        sel.all(k, k in labels && labels[k] == sel[k]) || sel.all(k, k in oldLabels && oldLabels[k] == sel[k])))
    || vi.?status.?backends.orValue([]).exists(b, b.?service.orValue("") == svc.metadata.name)))
    .map(vi, vi.metadata.name))))))
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
