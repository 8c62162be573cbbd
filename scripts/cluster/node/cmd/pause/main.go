// Command pause is the local node's sandbox ("pause") image: it holds a pod's
// namespaces open, reaps any child re-parented to it, and exits on SIGINT or
// SIGTERM. No image registry is reachable here, so the node cannot pull
// Kubernetes' own pause image; this one is built from source with the node.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
