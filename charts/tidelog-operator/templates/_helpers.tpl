{{/* The release's objects are named after it, cut to Kubernetes' 63 characters. */}}
{{- define "tidelog-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "tidelog-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "tidelog-operator.labels" -}}
{{ include "tidelog-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "tidelog-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "tidelog-operator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Prometheus job names the ServiceMonitor and the PodMonitor give their targets. */}}
{{- define "tidelog-operator.operatorJob" -}}
{{- printf "%s/%s" .Release.Namespace (include "tidelog-operator.fullname" .) -}}
{{- end -}}
{{- define "tidelog-operator.brokerJob" -}}
{{- printf "%s/%s-brokers" .Release.Namespace (include "tidelog-operator.fullname" .) -}}
{{- end -}}

{{/*
The reconcilers' rules on namespaced objects: their own resources and status, each Cluster's
objects, one broker pod deleted at a time for a roll (and its rack written on it), volume growth,
Events, the Secrets of its certificates.
*/}}
{{- define "tidelog-operator.namespacedRules" -}}
- apiGroups: [tidelog.io]
  resources: [clusters, topics, users]
  verbs: [get, list, watch, patch, update]
- apiGroups: [tidelog.io]
  resources: [clusters/status, topics/status, users/status]
  verbs: [get, patch, update]
# The Topic and User reconcilers' finalizers
- apiGroups: [tidelog.io]
  resources: [topics/finalizers, users/finalizers]
  verbs: [update]
- apiGroups: [apps]
  resources: [statefulsets]
  verbs: [get, list, watch, create, update]
- apiGroups: [""]
  resources: [services, configmaps]
  verbs: [get, list, watch, create, update]
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [get, list, watch, create, update]
# Rolling restarts delete one broker pod at a time; broker.rack is written on a pod
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, patch, delete]
# Volume growth
- apiGroups: [""]
  resources: [persistentvolumeclaims]
  verbs: [get, list, patch]
- apiGroups: [""]
  resources: [events]
  verbs: [create]
# Who may reach each Cluster's pods
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, create, update]
# Each Cluster's CAs and certificates; read by name, never listed or watched
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, create, update]
{{- end -}}
