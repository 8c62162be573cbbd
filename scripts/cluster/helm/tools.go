//go:build tools

// Package tools pins helm's command so that `go mod tidy` keeps its
// dependencies. helm lives in its own module because its k8s.io versions
// differ from the control plane's.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
