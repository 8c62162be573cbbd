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

{{/*
The V8 old-space limit in MiB, three quarters of resources.limits.memory ("" without a limit).
Node sizes its heap from the cgroup's limit by itself, at about the whole limit, so the kernel
would kill the container before V8 collected; the rest of the limit is the young generation,
code, buffers and the TLS library.
*/}}
{{- define "admission-operator.heapMiB" -}}
{{- $limit := toString (dig "limits" "memory" "" (.Values.resources | default dict)) -}}
{{- if $limit -}}
{{- $units := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 -}}
{{- $number := regexFind "^[0-9]+" $limit -}}
{{- $suffix := trimPrefix $number $limit -}}
{{- if or (not $number) (not (hasKey $units $suffix)) -}}
{{- fail (printf "resources.limits.memory: %q is not a whole number of bytes with an optional unit (Ki, Mi, Gi, Ti, k, M, G, T)" $limit) -}}
{{- end -}}
{{- div (mul (atoi $number) (get $units $suffix) 3) 4194304 -}}
{{- end -}}
{{- end -}}
