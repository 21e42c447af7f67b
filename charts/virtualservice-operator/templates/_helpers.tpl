{{/*
Chart name, truncated to the 63 characters a label value allows.
*/}}
{{- define "vso.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Object name prefix. 52 characters leave room for the longest suffix ("-production", "-developer").
*/}}
{{- define "vso.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else if contains (include "vso.name" .) .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "vso.name" .) | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "vso.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "vso.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vso.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "vso.labels" -}}
helm.sh/chart: {{ include "vso.chart" . }}
{{ include "vso.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: virtualservice-operator
{{- end }}

{{- define "vso.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "vso.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "vso.configMapName" -}}
{{- include "vso.fullname" . }}-config
{{- end }}

{{/*
Leader election Lease name (the operator's --leader-election-id), granted by name in the release namespace's Role.
*/}}
{{- define "vso.leaseName" -}}
{{- include "vso.fullname" . }}
{{- end }}

{{- define "vso.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
The metrics port: HTTPS with Kubernetes authentication and authorisation on 8443 (the kubebuilder convention), plain
HTTP on 8080 when metrics.secure is off.
*/}}
{{- define "vso.metricsPort" -}}
{{- ternary 8443 8080 .Values.metrics.secure }}
{{- end }}

{{- define "vso.metricsPortName" -}}
{{- ternary "https-metrics" "http-metrics" .Values.metrics.secure }}
{{- end }}

{{/*
The Pod security context: the values' one, plus the images' user (65532, as tools/images builds them) as its UID, group
unless global.openshift. There the SCC (restricted-v2) assigns the UID and fsGroup from the namespace's range and
refuses any other, so none is fixed unless the values set one. Elsewhere the number lets the kubelet check
runAsNonRoot for images whose USER is a name (curl's).
*/}}
{{- define "vso.podSecurityContext" -}}
{{- $psc := deepCopy (.Values.podSecurityContext | default dict) -}}
{{- if not (dig "openshift" false (.Values.global | default dict)) -}}
{{- $psc = merge $psc (dict "runAsUser" 65532 "runAsGroup" 65532) -}}
{{- end -}}
{{- toYaml $psc -}}
{{- end }}
