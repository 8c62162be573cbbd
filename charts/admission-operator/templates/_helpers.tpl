{{- define "admission-operator.name" -}}{{ .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" }}{{- end -}}

{{/*
One name for the Service, the ServiceAccount, the RBAC and the owner ClusterRole: fullnameOverride,
else the name alone for a release of that name, else <release>-<name>.
*/}}
{{- define "admission-operator.fullname" -}}
{{- $name := include "admission-operator.name" . -}}
{{- if .Values.fullnameOverride -}}{{ .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if eq .Release.Name $name -}}{{ $name }}
{{- else -}}{{ printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- end -}}

{{/*
The ServiceAccount the operator runs as and the RBAC is bound to. Without serviceAccount.create
it must be named: binding the operator's rights to the namespace's `default` account would hand
them to every other pod there.
*/}}
{{- define "admission-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}{{ .Values.serviceAccount.name | default (include "admission-operator.fullname" .) }}
{{- else -}}{{ required "serviceAccount.name: required when serviceAccount.create is false" .Values.serviceAccount.name }}{{- end -}}
{{- end -}}

{{- define "admission-operator.labels" -}}
app.kubernetes.io/name: {{ include "admission-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "admission-operator.selector" -}}
app.kubernetes.io/name: {{ include "admission-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "admission-operator.sloNamespace" -}}{{ .Values.sloConfigNamespace | default "koordinator-system" }}{{- end -}}

{{- /* The ConfigMap holding the API server's client CA: the one named, or the chart's own from clientVerification.certificate.ca. */}}
{{- define "admission-operator.clientCaConfigMap" -}}
{{- with .Values.clientVerification.certificate -}}
{{- if .caConfigMap }}{{ .caConfigMap }}{{ else if .ca }}{{ include "admission-operator.fullname" $ }}-client-ca{{ else }}{{ fail "clientVerification.certificate: name the ConfigMap holding the API server's client CA (caConfigMap), or give the CA itself (ca)" }}{{ end -}}
{{- end -}}
{{- end -}}
