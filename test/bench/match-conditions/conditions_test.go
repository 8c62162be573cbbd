// The cost of our webhooks' match conditions to the API server, measured with its own matcher
// (k8s.io/apiserver's webhook/matchconditions) at the release under test: `npm run bench --
// conditions` copies this file and the release's shim into a module of that release's
// go.mod (scripts/cluster/kubernetes/v<release>/) and runs it. Each case of cases.json is a
// list of conditions, evaluated for a defaulted Deployment pod on CREATE, with everything the
// API server does per review and webhook (the CEL view of the object built again each time).
package conditions

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/webhook"
	"k8s.io/apiserver/pkg/authentication/user"
)

// A pod as a ReplicaSet creates it, after the API server's defaulting and service-account admission.
func deploymentPod() *corev1.Pod {
	grace, priority, tolerated, expiry := int64(30), int32(0), int64(300), int64(3607)
	serviceLinks, mode := true, int32(420)
	preemption := corev1.PreemptLowerPriority
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "web-7d9f8b6c5d-", Namespace: "plain",
			Labels:          map[string]string{"app": "web", "pod-template-hash": "7d9f8b6c5d"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f8b6c5d", UID: "0f1e2d3c-0000-4000-8000-000000000000"}},
		},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: &mode,
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &expiry}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				},
			}}}},
			Containers: []corev1.Container{{
				Name: "web", Image: "nginx:1.27",
				Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				VolumeMounts:             []corev1.VolumeMount{{Name: "kube-api-access", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullIfNotPresent,
			}},
			RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace, DNSPolicy: corev1.DNSClusterFirst,
			ServiceAccountName: "default", SecurityContext: &corev1.PodSecurityContext{}, SchedulerName: "default-scheduler",
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &tolerated},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &tolerated},
			},
			Priority: &priority, EnableServiceLinks: &serviceLinks, PreemptionPolicy: &preemption,
		},
	}
}

func createAttributes() *admission.VersionedAttributes {
	pod := deploymentPod()
	kind := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	record := admission.NewAttributesRecord(pod, nil, kind, pod.Namespace, "", schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "",
		admission.Create, &metav1.CreateOptions{}, false, &user.DefaultInfo{Name: "system:serviceaccount:kube-system:replicaset-controller"})
	return versionedAttributes(record, kind, pod)
}

func BenchmarkConditions(b *testing.B) {
	raw, err := os.ReadFile(os.Getenv("CONDITIONS"))
	if err != nil {
		b.Fatal(err)
	}
	var cases map[string][]string
	if err := json.Unmarshal(raw, &cases); err != nil {
		b.Fatal(err)
	}
	for name, expressions := range cases {
		b.Run(name, func(b *testing.B) {
			conditions := make([]admissionregistrationv1.MatchCondition, len(expressions))
			for i, expression := range expressions {
				conditions[i] = admissionregistrationv1.MatchCondition{Name: "c" + string(rune('a'+i)), Expression: expression}
			}
			fail := admissionregistrationv1.Fail
			accessor := webhook.NewValidatingWebhookAccessor("uid", "bench", &admissionregistrationv1.ValidatingWebhook{Name: "bench.example.io", FailurePolicy: &fail, MatchConditions: conditions})
			matcher := accessor.GetCompiledMatcher(compiler())
			if result := matcher.Match(context.Background(), createAttributes(), nil, nil); result.Error != nil {
				b.Fatalf("%s: %v", name, result.Error)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				matcher.Match(context.Background(), createAttributes(), nil, nil)
			}
		})
	}
}
