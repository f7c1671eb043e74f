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
