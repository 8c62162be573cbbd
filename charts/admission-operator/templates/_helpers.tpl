{{- define "admission-operator.name" -}}admission-operator{{- end -}}

{{/* One name for the Service, the ServiceAccount, the RBAC and the owner ClusterRole. */}}
{{- define "admission-operator.fullname" -}}
{{- if eq .Release.Name "admission-operator" -}}admission-operator{{- else -}}{{ printf "%s-admission-operator" .Release.Name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{- define "admission-operator.labels" -}}
app.kubernetes.io/name: admission-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "admission-operator.selector" -}}
app.kubernetes.io/name: admission-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "admission-operator.sloNamespace" -}}{{ .Values.sloConfigNamespace | default "koordinator-system" }}{{- end -}}
