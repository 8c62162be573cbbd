// Kubernetes 1.30's matcher: a filter compiler, the versioned object as it is.
package conditions

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

func compiler() cel.FilterCompiler {
	return cel.NewFilterCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion(), false))
}

func versionedAttributes(record admission.Attributes, kind schema.GroupVersionKind, object runtime.Object) *admission.VersionedAttributes {
	return &admission.VersionedAttributes{Attributes: record, VersionedKind: kind, VersionedObject: object}
}
