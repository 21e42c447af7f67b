{{/*
The name of the object generated from a VirtualIngress (VirtualHTTPRoute): its name and generatedIngress.nameSuffix.
Said once per policy engine; the status controller gets the suffix as --name-suffix.
*/}}

{{/*
ClusterPolicy engine: the name as a Kyverno value with a variable. It is the generate rule's generate.name, and the
value of the context variable vi_generated_name of every rule that reads it (virtual-ingress.rule adds it): a generate
rule may have no context (Kyverno refuses to change it on policy update), so the rule spells the same value.
*/}}
{{- define "virtual-ingress.generatedNameJMESPath" -}}
{{ printf "{{ request.object.metadata.name }}%s" .Values.generatedIngress.nameSuffix }}
{{- end }}

{{/*
CEL engine: variables.generatedName of every policy whose CEL reads it (virtual-ingress.celSpec adds it). A JSON
string is a CEL string literal.
*/}}
{{- define "virtual-ingress.generatedNameCEL" -}}
object.metadata.name + {{ toJson .Values.generatedIngress.nameSuffix }}
{{- end }}
