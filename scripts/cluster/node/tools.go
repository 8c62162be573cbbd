//go:build tools

// Package tools pins the node's container runtime and network plugins so that
// `go mod tidy` keeps their dependencies. They live in a module of their own
// because containerd's and the CNI plugins' dependency versions differ from
// the Kubernetes ones the control plane module pins.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
	_ "github.com/containernetworking/plugins/plugins/ipam/host-local"
	_ "github.com/containernetworking/plugins/plugins/main/bridge"
	_ "github.com/containernetworking/plugins/plugins/main/loopback"
	_ "github.com/containernetworking/plugins/plugins/meta/portmap"
)
