{{/*
A line for NOTES.txt on the Kyverno this release runs beside: the tag of the running admission controller's image
(Kyverno's chart labels its Deployments with its chart version, not Kyverno's) checked against the range in
Chart.yaml's virtual-ingress.io/kyverno-versions. Read with lookup, so `helm template` and a client-side dry run,
which cannot read the cluster, say nothing.
*/}}
{{- define "virtual-ingress.kyvernoVersionNote" -}}
{{- $supported := index .Chart.Annotations "virtual-ingress.io/kyverno-versions" }}
{{- $namespace := .Values.rbac.kyvernoServiceAccounts.namespace }}
{{- $deployments := lookup "apps/v1" "Deployment" $namespace "" }}
{{- if $deployments }}
{{- $found := "" }}
{{- range $d := $deployments.items }}
{{- if eq (index ($d.metadata.labels | default dict) "app.kubernetes.io/component" | default "") "admission-controller" }}
{{- range $c := $d.spec.template.spec.containers }}
{{- if and (not $found) (eq $c.name "kyverno") }}
{{- $found = (regexFind ":v?[0-9]+\\.[0-9]+\\.[0-9]+[^:@/]*" $c.image | trimPrefix ":" | trimPrefix "v") | default (printf "unknown (image %s)" $c.image) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- if not $found }}

WARNING: no Kyverno admission controller runs in namespace {{ $namespace }} (rbac.kyvernoServiceAccounts.namespace).
These policies do nothing without Kyverno {{ $supported }}.
{{- else if hasPrefix "unknown" $found }}

Kyverno's admission controller runs an image without a version tag ({{ $found | trimPrefix "unknown " }}): this chart
supports Kyverno {{ $supported }}.
{{- else if not (semverCompare $supported $found) }}

WARNING: Kyverno {{ $found }} runs in namespace {{ $namespace }}; this chart supports Kyverno {{ $supported }}.
Policies may be refused, or behave differently (see the README's "Policy engines").
{{- else }}

Kyverno {{ $found }} runs in namespace {{ $namespace }} (supported: {{ $supported }}).
{{- end }}
{{- end }}
{{- end }}
