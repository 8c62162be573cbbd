// Command kthena-oracle answers AdmissionReviews with Kthena v1.0.0's own webhook handlers, for the
// differential suite (test/differential/kthena/). It reads one JSON request per line on stdin,
// {"path": "/validate/modelroute", "body": "<AdmissionReview JSON>"}, passes the body to the
// handler Kthena serves at that path, exactly as Kthena's HTTP server would (Content-Type
// application/json), and writes one JSON line per request: the HTTP status and body the handler
// wrote, or the panic it raised (Go's HTTP server would drop that connection).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	autoscalerwebhook "github.com/volcano-sh/kthena/pkg/autoscaler/webhook"
	routerwebhook "github.com/volcano-sh/kthena/pkg/kthena-router/webhook"
	modelboosterwebhook "github.com/volcano-sh/kthena/pkg/model-booster-controller/webhook"
	modelservingwebhook "github.com/volcano-sh/kthena/pkg/model-serving-controller/webhook"
	"k8s.io/klog/v2"
)

type request struct {
	Path string `json:"path"`
	Body string `json:"body"`
}

type answer struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
	Panic  string `json:"panic,omitempty"`
}

// handlers are the paths Kthena v1.0.0's charts register, each with the handler its binaries
// mount there (cmd/kthena-controller-manager/main.go, pkg/kthena-router/webhook/validator.go).
func handlers() map[string]http.HandlerFunc {
	// The router's validator only uses its client to serve; its handlers read nothing.
	router := routerwebhook.NewKthenaRouterValidator(nil, 0)
	return map[string]http.HandlerFunc{
		"/mutate/modelbooster":                        modelboosterwebhook.NewModelMutator().Handle,
		"/validate/modelbooster":                      modelboosterwebhook.NewModelValidator().Handle,
		"/mutate/autoscalingpolicy":                   autoscalerwebhook.NewAutoscalingPolicyMutator().Handle,
		"/validate/autoscalingpolicy":                 autoscalerwebhook.NewAutoscalingPolicyValidator().Handle,
		"/validate-workload-ai-v1alpha1-modelserving": modelservingwebhook.NewModelServingValidator().Handle,
		"/validate/modelroute":                        router.HandleModelRoute,
		"/validate/modelserver":                       router.HandleModelServer,
	}
}

func serve(handler http.HandlerFunc, body string) (out answer) {
	defer func() {
		if recovered := recover(); recovered != nil {
			out = answer{Panic: fmt.Sprint(recovered)}
		}
	}()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	recorder := httptest.NewRecorder()
	handler(recorder, req)
	return answer{Status: recorder.Code, Body: recorder.Body.String()}
}

func main() {
	klog.InitFlags(nil)
	verbosity := os.Getenv("ORACLE_LOG")
	if verbosity == "" {
		// Kthena logs every decision at info level; only errors reach stderr unless asked.
		_ = flag.Set("logtostderr", "false")
		_ = flag.Set("stderrthreshold", "FATAL")
		klog.SetOutput(nil)
	} else {
		_ = flag.Set("v", verbosity)
	}
	flag.Parse()
	byPath := handlers()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintf(os.Stderr, "bad request line: %v\n", err)
			os.Exit(2)
		}
		handler, ok := byPath[req.Path]
		if !ok {
			fmt.Fprintf(os.Stderr, "no Kthena handler at %s\n", req.Path)
			os.Exit(2)
		}
		if err := out.Encode(serve(handler, req.Body)); err != nil {
			os.Exit(1)
		}
	}
}
