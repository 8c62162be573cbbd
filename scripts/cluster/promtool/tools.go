//go:build tools

// Package tools pins promtool's command so that `go mod tidy` keeps its
// dependencies. promtool lives in its own module because Prometheus pulls in
// k8s.io and cloud SDK versions of its own.
package tools

import _ "github.com/prometheus/prometheus/cmd/promtool"
