// Command etcd runs a single-member etcd for the local test control plane.
//
// It embeds go.etcd.io/etcd/server/v3/embed at the version k8s.io/kubernetes
// requires, the way Kubernetes' own integration test server does, so that the
// API server and etcd always agree on the wire protocol.
package main

import (
	"flag"
	"log"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dataDir := flag.String("data-dir", "", "directory for etcd's data (required)")
	clientURL := flag.String("listen-client-url", "http://127.0.0.1:2379", "client URL")
	peerURL := flag.String("listen-peer-url", "http://127.0.0.1:2380", "peer URL")
	flag.Parse()
	if *dataDir == "" {
		log.Fatal("--data-dir is required")
	}

	cfg := embed.NewConfig()
	cfg.Name = "local"
	cfg.Dir = *dataDir
	// A throwaway test cluster: fsync buys nothing and costs seconds per test run.
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "warn"
	client := mustParse(*clientURL)
	peer := mustParse(*peerURL)
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = cfg.Name + "=" + peer.String()

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		log.Fatalf("starting etcd: %v", err)
	}
	defer e.Close()

	select {
	case <-e.Server.ReadyNotify():
		log.Printf("etcd ready on %s", client.String())
	case <-time.After(60 * time.Second):
		e.Server.Stop()
		log.Fatal("etcd did not become ready within 60s")
	}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-e.Err():
		log.Fatalf("etcd failed: %v", err)
	case sig := <-stop:
		log.Printf("etcd stopping on %s", sig)
	}
}

func mustParse(raw string) url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		log.Fatalf("bad URL %q: %v", raw, err)
	}
	return *u
}
