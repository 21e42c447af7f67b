{{- define "ssvirt.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "ssvirt.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 55 | trimSuffix "-" }}
{{- else if contains (include "ssvirt.name" .) .Release.Name }}
{{- .Release.Name | trunc 55 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "ssvirt.name" .) | trunc 55 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "ssvirt.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ssvirt.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "ssvirt.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "ssvirt.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: api
app.kubernetes.io/part-of: ssvirt
{{- end }}

{{- define "ssvirt.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ssvirt.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "ssvirt.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
The Pod security context: the values' one, plus the images' user (65532, as tools/images builds them) as its UID, group and fsGroup (the SQLite volume must be writable by it)
unless global.openshift. There the SCC (restricted-v2) assigns the UID and fsGroup from the namespace's range and
refuses any other, so none is fixed unless the values set one. Elsewhere the number lets the kubelet check
runAsNonRoot for images whose USER is a name (curl's).
*/}}
{{- define "ssvirt.podSecurityContext" -}}
{{- $psc := deepCopy (.Values.podSecurityContext | default dict) -}}
{{- if not (dig "openshift" false (.Values.global | default dict)) -}}
{{- $psc = merge $psc (dict "runAsUser" 65532 "runAsGroup" 65532 "fsGroup" 65532) -}}
{{- end -}}
{{- toYaml $psc -}}
{{- end }}
