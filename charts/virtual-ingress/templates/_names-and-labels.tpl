{{/*
Names and labels: the chart's and the release's names, the names of the objects the chart creates and that
the policies name (the status controller, the GlobalContextEntries), and the labels every object gets.
*/}}

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
Name of the GlobalContextEntry through which the service-events policies find the VirtualHTTPRoutes a Service concerns.
*/}}
{{- define "virtual-ingress.virtualHTTPRoutesCache" -}}
{{- printf "%s-virtualhttproutes" (include "virtual-ingress.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The Pod security context: the values' one, plus the images' user (65532, as tools/images builds them) as its UID, group
unless global.openshift. There the SCC (restricted-v2) assigns the UID and fsGroup from the namespace's range and
refuses any other, so none is fixed unless the values set one. Elsewhere the number lets the kubelet check
runAsNonRoot for images whose USER is a name (curl's).
*/}}
{{- define "virtual-ingress.podSecurityContext" -}}
{{- $psc := deepCopy (.Values.controller.podSecurityContext | default dict) -}}
{{- if not (dig "openshift" false (.Values.global | default dict)) -}}
{{- $psc = merge $psc (dict "runAsUser" 65532 "runAsGroup" 65532) -}}
{{- end -}}
{{- toYaml $psc -}}
{{- end }}
