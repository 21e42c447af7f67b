{{/*
Chart name, truncated to the 63 characters a label value allows.
*/}}
{{- define "aio.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Object name prefix. 52 characters leave room for the longest suffix ("-metrics-reader").
*/}}
{{- define "aio.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 48 | trimSuffix "-" }}
{{- else if contains (include "aio.name" .) .Release.Name }}
{{- .Release.Name | trunc 48 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "aio.name" .) | trunc 48 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "aio.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Selector labels of one component (operator, dns, proxy): pass (list $ "component").
*/}}
{{- define "aio.selectorLabels" -}}
{{- $ := index . 0 -}}
app.kubernetes.io/name: {{ include "aio.name" $ }}
app.kubernetes.io/instance: {{ $.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "aio.labels" -}}
{{- $ := index . 0 -}}
helm.sh/chart: {{ include "aio.chart" $ }}
{{ include "aio.selectorLabels" . }}
app.kubernetes.io/version: {{ $.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ $.Release.Service }}
app.kubernetes.io/part-of: apps-ingress-operator
{{- end }}

{{- define "aio.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "aio.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The two ConfigMaps the operator writes and the DNS and proxy Pods mount. */}}
{{- define "aio.dnsConfigMap" -}}
{{- include "aio.fullname" . }}-dns
{{- end }}
{{- define "aio.proxyConfigMap" -}}
{{- include "aio.fullname" . }}-proxy
{{- end }}
{{- define "aio.proxyService" -}}
{{- include "aio.fullname" . }}-proxy
{{- end }}
{{- define "aio.dnsService" -}}
{{- include "aio.fullname" . }}-dns
{{- end }}

{{/* HAProxy's listening ports, which the operator renders into haproxy.cfg; its status frontend (which
configuration it loaded, which one its reloader refused) and the reloader's directory: the operator asks each replica
on that port. */}}
{{- define "aio.proxyHTTPPort" -}}
8080
{{- end }}
{{- define "aio.proxyHTTPSPort" -}}
8443
{{- end }}
{{- define "aio.proxyAPIPort" -}}
6443
{{- end }}
{{- define "aio.proxyStatusPort" -}}
8404
{{- end }}
{{- define "aio.proxyConfigDir" -}}
/usr/local/etc/haproxy
{{- end }}
{{- define "aio.proxyStateDir" -}}
/tmp/haproxy
{{- end }}

{{/*
A rendered ConfigMap's name and its shards' (<name>-<i>, configShards of them), comma-separated: pass (list $ name).
With "from", the shard names from that index to the most the schema allows (those an operator run with more shards
left, which the operator deletes): pass (list $ name from).
*/}}
{{- define "aio.configMapNames" -}}
{{- $ := index . 0 -}}
{{- $name := index . 1 -}}
{{- $names := list -}}
{{- if eq (len .) 2 }}
{{- $names = append $names $name -}}
{{- range $i := until (int $.Values.configShards) }}
{{- $names = append $names (printf "%s-%d" $name $i) -}}
{{- end }}
{{- else }}
{{- range $i := untilStep (int (index . 2)) (int (include "aio.maxConfigShards" $)) 1 }}
{{- $names = append $names (printf "%s-%d" $name $i) -}}
{{- end }}
{{- end }}
{{- join ", " $names }}
{{- end }}

{{/* The most shards values.schema.json allows for configShards (its maximum), and the operator's --config-shards. */}}
{{- define "aio.maxConfigShards" -}}
32
{{- end }}

{{- define "aio.leaseName" -}}
{{- include "aio.fullname" . }}
{{- end }}

{{/* An image reference from {repository, tag, digest} with a default tag. Pass (list .Values.x.image "default-tag"). */}}
{{- define "aio.image" -}}
{{- $img := index . 0 -}}
{{- if $img.digest }}
{{- printf "%s@%s" $img.repository $img.digest }}
{{- else }}
{{- printf "%s:%s" $img.repository (default (index . 1) $img.tag) }}
{{- end }}
{{- end }}

{{- define "aio.metricsPort" -}}
{{- ternary 8443 8080 .Values.metrics.secure }}
{{- end }}

{{- define "aio.metricsPortName" -}}
{{- ternary "https-metrics" "http-metrics" .Values.metrics.secure }}
{{- end }}

{{/* CoreDNS's port: the Service maps 53 to it (under hostNetwork, a port less likely taken on a node than 5353, which
mDNS uses; VLAN clients then ask port 53 of dns.vlanAddresses). Its health
and ready ports stay clear of HAProxy's (8080, 8443, 6443, 8404), which may share a node's network. The directory is
where the DNS ConfigMap is mounted: the Corefile names its zone files there. */}}
{{- define "aio.dnsPort" -}}
{{- ternary 10053 5353 .Values.dns.hostNetwork }}
{{- end }}
{{- define "aio.dnsHealthPort" -}}
8053
{{- end }}
{{- define "aio.dnsReadyPort" -}}
8181
{{- end }}
{{- define "aio.dnsConfigDir" -}}
/etc/coredns
{{- end }}

{{/*
Where a CoreDNS or HAProxy Pod runs and which network it is on: pass (list $ .Values.dns "dns") or
(list $ .Values.proxy "proxy"). The component's nodeSelector wins over the top-level one; tolerations add up; a
topology spread constraint without a labelSelector gets the component's.
*/}}
{{- define "aio.placement" -}}
{{- $ := index . 0 -}}
{{- $c := index . 1 -}}
{{- $selector := include "aio.selectorLabels" (list $ (index . 2)) | fromYaml -}}
{{- if $c.hostNetwork }}
hostNetwork: true
dnsPolicy: ClusterFirstWithHostNet
{{- end }}
{{- with merge (deepCopy ($c.nodeSelector | default dict)) ($.Values.nodeSelector | default dict) }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with concat ($.Values.tolerations | default list) ($c.tolerations | default list) }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $c.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $c.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- range . }}
  {{- $constraint := deepCopy . }}
  {{- if not (hasKey $constraint "labelSelector") }}
  {{- $_ := set $constraint "labelSelector" (dict "matchLabels" $selector) }}
  {{- end }}
  - {{ toYaml $constraint | indent 4 | trim }}
  {{- end }}
{{- end }}
{{- end }}

{{/*
The Deployment strategy of CoreDNS or HAProxy: pass (list $ .Values.dns) or (list $ .Values.proxy). The value when
set; else by attachment mode. On the node's network a new Pod cannot bind the ports its predecessor holds on that
node, so the rollout stops one Pod before it starts the next (maxSurge 0); with a static address on a secondary
network, two Pods would hold the same address, so every old Pod is gone before a new one starts (Recreate); on the
pod network a new Pod is Ready before an old one stops.
*/}}
{{- define "aio.strategy" -}}
{{- $c := index . 1 -}}
{{- if $c.updateStrategy }}
{{- toYaml $c.updateStrategy }}
{{- else if $c.hostNetwork }}
type: RollingUpdate
rollingUpdate: {maxSurge: 0, maxUnavailable: 1}
{{- else if hasKey ($c.podAnnotations | default dict) "k8s.v1.cni.cncf.io/networks" }}
type: Recreate
{{- else }}
type: RollingUpdate
rollingUpdate: {maxSurge: 1, maxUnavailable: 0}
{{- end }}
{{- end }}

{{/* The ServiceAccount of a component's (dns, proxy) config sidecars: pass (list $ "dns"). */}}
{{- define "aio.configSyncServiceAccount" -}}
{{- include "aio.fullname" (index . 0) }}-{{ index . 1 }}-config
{{- end }}

{{/* A config sidecar (or, with --once, the init container writing the files before the server starts): pass
(list $ configMapName directory once). */}}
{{- define "aio.configSync.container" -}}
{{- $ := index . 0 -}}
image: {{ include "aio.image" (list $.Values.image $.Chart.AppVersion) | quote }}
imagePullPolicy: {{ $.Values.image.pullPolicy }}
args:
  - sync-files
  - --config-map={{ index . 1 }}
  - --shards={{ $.Values.configShards }}
  - --dir={{ index . 2 }}
  {{- if index . 3 }}
  - --once
  {{- end }}
env:
  - name: POD_NAMESPACE
    valueFrom:
      fieldRef:
        fieldPath: metadata.namespace
resources:
  {{- toYaml $.Values.configSync.resources | nindent 2 }}
securityContext:
  {{- toYaml $.Values.securityContext | nindent 2 }}
volumeMounts:
  - {name: config, mountPath: {{ index . 2 }}}
  - {name: kube-api-access, mountPath: /var/run/secrets/kubernetes.io/serviceaccount, readOnly: true}
{{- end }}

{{/*
The init containers of a CoreDNS or HAProxy Pod: pass (list $ componentValues configMapName configDir). With a Multus
networks annotation, check-attachments first: where no CNI reads that annotation the Pod would start on the pod
network alone and be Ready while VLAN clients cannot reach it; the check keeps it from starting, and says why. Then,
with configSync, the first copy of the rendered files.
*/}}
{{- define "aio.initContainers" -}}
{{- $ := index . 0 -}}
{{- $networks := hasKey ((index . 1).podAnnotations | default dict) "k8s.v1.cni.cncf.io/networks" -}}
{{- if or $networks $.Values.configSync.enabled }}
initContainers:
  {{- if $networks }}
  - name: check-attachments
    image: {{ include "aio.image" (list $.Values.image $.Chart.AppVersion) | quote }}
    imagePullPolicy: {{ $.Values.image.pullPolicy }}
    args: [check-attachments, --annotations=/etc/podinfo/annotations]
    resources:
      {{- toYaml $.Values.configSync.resources | nindent 6 }}
    securityContext:
      {{- toYaml $.Values.securityContext | nindent 6 }}
    volumeMounts:
      - {name: podinfo, mountPath: /etc/podinfo, readOnly: true}
  {{- end }}
  {{- if $.Values.configSync.enabled }}
  - name: config-init
    {{- include "aio.configSync.container" (list $ (index . 2) (index . 3) true) | nindent 4 }}
  {{- end }}
{{- end }}
{{- end }}

{{/* The Downward API volume check-attachments reads: pass (list $ componentValues). */}}
{{- define "aio.podinfo.volume" -}}
{{- if hasKey ((index . 1).podAnnotations | default dict) "k8s.v1.cni.cncf.io/networks" }}
- name: podinfo
  downwardAPI:
    items:
      - {path: annotations, fieldRef: {fieldPath: metadata.annotations}}
{{- end }}
{{- end }}

{{/* The volumes behind "config" (and the sidecars' token): pass (list $ configMapName). */}}
{{- define "aio.configSync.volumes" -}}
{{- $ := index . 0 -}}
{{- if $.Values.configSync.enabled }}
- name: config
  emptyDir:
    sizeLimit: 64Mi
- name: kube-api-access
  projected:
    sources:
      - serviceAccountToken: {path: token, expirationSeconds: 3607}
      - configMap: {name: kube-root-ca.crt, items: [{key: ca.crt, path: ca.crt}]}
      - downwardAPI: {items: [{path: namespace, fieldRef: {fieldPath: metadata.namespace}}]}
{{- else }}
- name: config
  projected:
    sources:
      {{- range splitList ", " (include "aio.configMapNames" (list $ (index . 1))) }}
      - configMap: {name: {{ . }}}
      {{- end }}
{{- end }}
{{- end }}

{{/*
The Pod security context: the values' one, plus the images' user (65532, as tools/images builds them) as its UID, group
unless global.openshift. There the SCC (restricted-v2) assigns the UID and fsGroup from the namespace's range and
refuses any other, so none is fixed unless the values set one. Elsewhere the number lets the kubelet check
runAsNonRoot for images whose USER is a name (curl's).
*/}}
{{- define "aio.podSecurityContext" -}}
{{- $psc := deepCopy (.Values.podSecurityContext | default dict) -}}
{{- if not (dig "openshift" false (.Values.global | default dict)) -}}
{{- $psc = merge $psc (dict "runAsUser" 65532 "runAsGroup" 65532) -}}
{{- end -}}
{{- toYaml $psc -}}
{{- end }}
