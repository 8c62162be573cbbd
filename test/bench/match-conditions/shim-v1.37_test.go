// Kubernetes 1.37's matcher: a condition compiler, the versioned object behind a LazyObject
// (its CEL view built once per review and shared by the webhooks).
package conditions

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

func compiler() cel.ConditionCompiler {
	return cel.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
}

func versionedAttributes(record admission.Attributes, kind schema.GroupVersionKind, object runtime.Object) *admission.VersionedAttributes {
	return &admission.VersionedAttributes{Attributes: record, VersionedKind: kind, VersionedObject: admission.NewLazyObject(object)}
}
