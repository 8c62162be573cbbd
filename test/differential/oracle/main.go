// The differential suite's oracle: Koordinator's own admission webhooks, built from its Go module
// (test/differential/oracle-build.ts copies the pinned module version out of the module cache, drops
// this folder into the copy as cmd/admission-operator-oracle, and builds it there, so the module's
// replace directives apply) and set up as koord-manager sets them up (pkg/webhook.SetupWithManager),
// over a controller-runtime fake client that holds the state the suite sends.
//
// It speaks newline-delimited JSON on stdin and stdout, one answer line per request line, in order:
//
//	{"op":"world","objects":[...]}              the cluster state every following review is judged against
//	{"op":"review","path":"/validate-pod","review":{AdmissionReview}}
//	                                            -> {"status":200,"body":{AdmissionReview}} or {"panic":"..."}
//	{"op":"canonical","object":{...}}           -> {"object":{...}}: the object through its Go type and back,
//	                                               as the API server stores a built-in kind
//
// Flags: --feature-gates (Koordinator's syntax, applied before the handlers are set up).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"

	"k8s.io/klog/v2"

	utilfeature "github.com/koordinator-sh/koordinator/pkg/util/feature"
)

type request struct {
	Op      string            `json:"op"`
	Objects []json.RawMessage `json:"objects,omitempty"`
	Path    string            `json:"path,omitempty"`
	Review  json.RawMessage   `json:"review,omitempty"`
	Object  json.RawMessage   `json:"object,omitempty"`
}

type answer struct {
	Status int             `json:"status,omitempty"`
	Body   json.RawMessage `json:"body,omitempty"`
	Panic  string          `json:"panic,omitempty"`
	Stack  string          `json:"stack,omitempty"`
	Object json.RawMessage `json:"object,omitempty"`
	Error  string          `json:"error,omitempty"`
	OK     bool            `json:"ok,omitempty"`
}

func main() {
	gates := flag.String("feature-gates", "", "Koordinator feature gates, e.g. EnableQuotaAdmission=true")
	klogFlags := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(klogFlags)
	flag.Parse()
	// Koordinator logs every refusal at Info; the suite reads only stdout, and stderr stays quiet
	// unless ORACLE_LOG names a klog verbosity (for a replayed review: its stderr is shown).
	if verbosity := os.Getenv("ORACLE_LOG"); verbosity != "" {
		_ = klogFlags.Set("v", verbosity)
	} else {
		_ = klogFlags.Set("logtostderr", "false")
		_ = klogFlags.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	}

	if *gates != "" {
		if err := utilfeature.DefaultMutableFeatureGate.Set(*gates); err != nil {
			fmt.Fprintf(os.Stderr, "--feature-gates: %v\n", err)
			os.Exit(2)
		}
	}
	oracle, err := newOracle()
	if err != nil {
		fmt.Fprintf(os.Stderr, "setting up Koordinator's webhooks: %v\n", err)
		os.Exit(1)
	}

	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer out.Flush()
	encoder := json.NewEncoder(out)
	encoder.SetEscapeHTML(false)
	for {
		line, readErr := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var req request
			var ans answer
			if err := json.Unmarshal(line, &req); err != nil {
				ans = answer{Error: fmt.Sprintf("request line is not JSON: %v", err)}
			} else {
				ans = oracle.serve(req)
			}
			if err := encoder.Encode(ans); err != nil {
				fmt.Fprintf(os.Stderr, "writing an answer: %v\n", err)
				os.Exit(1)
			}
			// The suite waits for each answer before it sends what depends on it.
			if in.Buffered() == 0 {
				out.Flush()
			}
		}
		if readErr != nil {
			return
		}
	}
}

func (o *oracle) serve(req request) answer {
	switch req.Op {
	case "world":
		if err := o.setWorld(req.Objects); err != nil {
			return answer{Error: err.Error()}
		}
		return answer{OK: true}
	case "review":
		return o.review(req.Path, req.Review)
	case "canonical":
		object, err := o.canonical(req.Object)
		if err != nil {
			return answer{Error: err.Error()}
		}
		return answer{Object: object}
	default:
		return answer{Error: fmt.Sprintf("unknown op %q", req.Op)}
	}
}

// review sends one AdmissionReview to the handler koord-manager registers at path, through
// controller-runtime's HTTP handler (the body koord-manager would answer on the wire). Each review
// is judged against a fresh copy of the world, so what one review writes (the quota evaluator's
// child-request update, the quota tree a successful validation updates) never reaches the next.
func (o *oracle) review(path string, body json.RawMessage) (ans answer) {
	handler, ok := o.handlers[path]
	if !ok {
		return answer{Error: fmt.Sprintf("no handler registered at %s", path)}
	}
	if err := o.resetState(); err != nil {
		return answer{Error: err.Error()}
	}
	// koord-manager registers its handlers without RecoverPanic: a panic kills the call, and the
	// API server applies the webhook's failure policy. Reported as such.
	defer func() {
		if r := recover(); r != nil {
			ans = answer{Panic: fmt.Sprint(r), Stack: string(debug.Stack())}
		}
	}()
	httpRequest := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	httpRequest.Header.Set("Content-Type", "application/json")
	recorder := httptest.NewRecorder()
	handler.ServeHTTP(recorder, httpRequest)
	return answer{Status: recorder.Code, Body: bytes.TrimSpace(recorder.Body.Bytes())}
}
