package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configv1alpha1 "github.com/koordinator-sh/koordinator/apis/config/v1alpha1"
	quotav1alpha1 "github.com/koordinator-sh/koordinator/apis/quota/v1alpha1"
	schedulingv1alpha1 "github.com/koordinator-sh/koordinator/apis/scheduling/v1alpha1"
	slov1alpha1 "github.com/koordinator-sh/koordinator/apis/slo/v1alpha1"
	"github.com/koordinator-sh/koordinator/apis/thirdparty/scheduler-plugins/pkg/apis/scheduling/v1alpha1"
	"github.com/koordinator-sh/koordinator/pkg/util/fieldindex"
	"github.com/koordinator-sh/koordinator/pkg/webhook"
	"github.com/koordinator-sh/koordinator/pkg/webhook/elasticquota"
	podvalidating "github.com/koordinator-sh/koordinator/pkg/webhook/pod/validating"
)

// newScheme is koord-manager's scheme (cmd/koord-manager/options/scheme.go), written out here
// because importing that package would build every controller of koord-manager.
func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = configv1alpha1.AddToScheme(scheme)
	_ = quotav1alpha1.AddToScheme(scheme)
	_ = slov1alpha1.AddToScheme(scheme)
	_ = schedulingv1alpha1.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	scheme.AddUnversionedTypes(metav1.SchemeGroupVersion, &metav1.UpdateOptions{}, &metav1.DeleteOptions{}, &metav1.CreateOptions{})
	return scheme
}

type oracle struct {
	scheme *runtime.Scheme
	codecs serializer.CodecFactory
	// What every handler holds as its client: the fake client of the review being judged.
	client   *switchableClient
	indexes  []recordedIndex
	handlers map[string]http.Handler
	world    []client.Object
	// Raised for every review, so the quota evaluator's cache of the quotas it wrote (it trusts a
	// cached copy whose resourceVersion is newer than the client's) never outlives its review.
	resourceVersion uint64
}

func newOracle() (*oracle, error) {
	scheme := newScheme()
	o := &oracle{
		scheme:          scheme,
		codecs:          serializer.NewCodecFactory(scheme),
		client:          &switchableClient{},
		handlers:        map[string]http.Handler{},
		resourceVersion: 1_000_000,
	}
	// koord-manager's field indexes, as fieldindex.RegisterFieldIndexes registers them on its cache.
	recorder := &indexRecorder{}
	if err := fieldindex.RegisterFieldIndexes(recorder); err != nil {
		return nil, fmt.Errorf("field indexes: %w", err)
	}
	o.indexes = recorder.indexes
	if err := o.resetState(); err != nil {
		return nil, err
	}
	server := &recordingServer{handlers: o.handlers}
	mgr := &fakeManager{client: o.client, scheme: scheme, cache: recorder, server: server}
	if err := webhook.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("SetupWithManager: %w", err)
	}
	return o, nil
}

// setWorld decodes the state every following review is judged against.
func (o *oracle) setWorld(raw []json.RawMessage) error {
	objects := make([]client.Object, 0, len(raw))
	deserializer := o.codecs.UniversalDeserializer()
	for i, item := range raw {
		decoded, _, err := deserializer.Decode(item, nil, nil)
		if err != nil {
			return fmt.Errorf("world object %d: %w", i, err)
		}
		object, ok := decoded.(client.Object)
		if !ok {
			return fmt.Errorf("world object %d (%T) is not a client.Object", i, decoded)
		}
		objects = append(objects, object)
	}
	o.world = objects
	// The pod-enhanced-validator reads its ConfigMap once, lazily, then every five minutes:
	// a new world gets a new validator, as a restarted koord-manager would.
	for _, handler := range o.handlers {
		if admissionWebhook, ok := handler.(*ctrlwebhook.Admission); ok {
			if podHandler, ok := admissionWebhook.Handler.(*podvalidating.PodValidatingHandler); ok {
				podHandler.PodEnhancedValidator = podvalidating.NewPodEnhancedValidator(o.client)
			}
		}
	}
	return nil
}

// resetState gives the handlers a fresh fake client holding the world, and a fresh quota tree
// filled from the world's ElasticQuotas through OnQuotaAdd, as koord-manager's quota informer fills it.
func (o *oracle) resetState() error {
	o.resourceVersion += 1000
	version := strconv.FormatUint(o.resourceVersion, 10)
	builder := fake.NewClientBuilder().WithScheme(o.scheme)
	for _, index := range o.indexes {
		builder = builder.WithIndex(index.object, index.field, index.extract)
	}
	quotas := []*v1alpha1.ElasticQuota{}
	for _, object := range o.world {
		copied := object.DeepCopyObject().(client.Object)
		copied.SetResourceVersion(version)
		builder = builder.WithObjects(copied)
		if quota, ok := copied.(*v1alpha1.ElasticQuota); ok {
			quotas = append(quotas, quota.DeepCopy())
		}
	}
	o.client.set(builder.Build())

	// The decoder is a pointer in v1.7.0's controller-runtime and an interface in v1.8.0's: made
	// here rather than kept in a field, the same code builds against both.
	decoder := admission.NewDecoder(o.scheme)
	plugin := elasticquota.NewPlugin(decoder, o.client)
	plugin.QuotaTopo = nil
	plugin = elasticquota.NewPlugin(decoder, o.client)
	for _, quota := range quotas {
		plugin.QuotaTopo.OnQuotaAdd(quota)
	}
	return nil
}

// canonical reads an object into its Go type and writes it back: what the API server stores of
// a built-in kind, and what Koordinator's handlers compute their patches from.
func (o *oracle) canonical(raw json.RawMessage) (json.RawMessage, error) {
	decoded, _, err := o.codecs.UniversalDeserializer().Decode(raw, nil, nil)
	if err != nil {
		return nil, err
	}
	return json.Marshal(decoded)
}

// Everything below stands in for what koord-manager's controller-runtime manager hands the
// webhook builders: its client, scheme, cache (field indexes, the quota informer) and server.

type recordedIndex struct {
	object  client.Object
	field   string
	extract client.IndexerFunc
}
