package main

import (
	"context"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
)

// fakeManager is the part of a controller-runtime manager the webhook builders use. Any other
// method is the embedded nil interface's and panics, so a builder reaching for more shows at once.
type fakeManager struct {
	manager.Manager
	client client.Client
	scheme *runtime.Scheme
	cache  cache.Cache
	server ctrlwebhook.Server
}

func (m *fakeManager) GetClient() client.Client                      { return m.client }
func (m *fakeManager) GetAPIReader() client.Reader                   { return m.client }
func (m *fakeManager) GetScheme() *runtime.Scheme                    { return m.scheme }
func (m *fakeManager) GetCache() cache.Cache                         { return m.cache }
func (m *fakeManager) GetWebhookServer() ctrlwebhook.Server          { return m.server }
func (m *fakeManager) GetFieldIndexer() client.FieldIndexer          { return m.cache }
func (m *fakeManager) GetRESTMapper() meta.RESTMapper                { return m.client.RESTMapper() }
func (m *fakeManager) Add(manager.Runnable) error                    { return nil }
func (m *fakeManager) AddHealthzCheck(string, healthz.Checker) error { return nil }
func (m *fakeManager) AddReadyzCheck(string, healthz.Checker) error  { return nil }

// recordingServer keeps the handlers SetupWithManager registers, by path.
type recordingServer struct {
	handlers map[string]http.Handler
}

func (s *recordingServer) NeedLeaderElection() bool                { return false }
func (s *recordingServer) Register(path string, hook http.Handler) { s.handlers[path] = hook }
func (s *recordingServer) Start(context.Context) error             { return nil }
func (s *recordingServer) StartedChecker() healthz.Checker {
	return func(*http.Request) error { return nil }
}
func (s *recordingServer) WebhookMux() *http.ServeMux { return http.NewServeMux() }

// indexRecorder is the manager's cache as far as the webhooks use it: it records the field
// indexes (the fake clients are built with them) and hands the quota handlers an informer whose
// events the oracle sends itself (OnQuotaAdd for every quota of the world).
type indexRecorder struct {
	cache.Cache
	indexes []recordedIndex
}

func (r *indexRecorder) IndexField(_ context.Context, object client.Object, field string, extract client.IndexerFunc) error {
	r.indexes = append(r.indexes, recordedIndex{object: object, field: field, extract: extract})
	return nil
}

func (r *indexRecorder) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return quietInformer{}, nil
}

// quietInformer embeds the interface so that methods a newer controller-runtime adds
// (AddEventHandlerWithOptions, IsStopped in v1.8.0's) exist and panic if a handler reaches for them.
type quietInformer struct{ cache.Informer }

func (quietInformer) AddEventHandler(toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return nil, nil
}
func (quietInformer) AddEventHandlerWithResyncPeriod(toolscache.ResourceEventHandler, time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return nil, nil
}
func (quietInformer) RemoveEventHandler(toolscache.ResourceEventHandlerRegistration) error {
	return nil
}
func (quietInformer) AddIndexers(toolscache.Indexers) error { return nil }
func (quietInformer) HasSynced() bool                       { return true }

// switchableClient is the one client every handler holds; the oracle points it at a fresh fake
// client for each review.
// The embedded nil interface gives it the methods a newer controller-runtime adds to the client
// (Apply in v1.8.0's); one a handler calls panics, so it shows at once.
type switchableClient struct {
	client.Client
	mu      sync.RWMutex
	current client.Client
}

func (c *switchableClient) set(next client.Client) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.current = next
}

func (c *switchableClient) get() client.Client {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.current
}

func (c *switchableClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.get().Get(ctx, key, obj, opts...)
}
func (c *switchableClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.get().List(ctx, list, opts...)
}
func (c *switchableClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return c.get().Create(ctx, obj, opts...)
}
func (c *switchableClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return c.get().Delete(ctx, obj, opts...)
}
func (c *switchableClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.get().Update(ctx, obj, opts...)
}
func (c *switchableClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.get().Patch(ctx, obj, patch, opts...)
}
func (c *switchableClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	return c.get().DeleteAllOf(ctx, obj, opts...)
}
func (c *switchableClient) Status() client.SubResourceWriter { return c.get().Status() }
func (c *switchableClient) SubResource(subResource string) client.SubResourceClient {
	return c.get().SubResource(subResource)
}
func (c *switchableClient) Scheme() *runtime.Scheme     { return c.get().Scheme() }
func (c *switchableClient) RESTMapper() meta.RESTMapper { return c.get().RESTMapper() }
func (c *switchableClient) GroupVersionKindFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	return c.get().GroupVersionKindFor(obj)
}
func (c *switchableClient) IsObjectNamespaced(obj runtime.Object) (bool, error) {
	return c.get().IsObjectNamespaced(obj)
}
