#!/usr/bin/env bash
# The floor, the oldest tested release: the integration tests of what the API server does differently
# across releases (docs/development.md, "Kubernetes releases"), on a cluster of its own
# (.cache/cluster-v<floor>), so it runs beside the end-to-end suite instead of after it.
#
#   scripts/ci/floor-suite.sh <floor Kubernetes version>
#
# It starts once the default release's integration suite has ended (its row in $CI_TIMINGS_FILE):
# that suite's bursts through two replicas count on their CPU, and the end-to-end suite that follows
# it spends most of its time waiting on the node, the kubelet's probes and leases.
set -euo pipefail
cd "$(dirname "$0")/../.."
floor=${1:?usage: scripts/ci/floor-suite.sh <floor Kubernetes version>}
: "${CI_TIMINGS_FILE:?CI_TIMINGS_FILE names the timings file the default suite writes its row into}"
floor_tests=(
  control-plane                 # the cluster itself: /version, CRDs, garbage collection, namespace deletion
  kubernetes-version            # the start-up check, and how the watches list (pages where WatchList is off)
  admission-through-api-server  # the API server's admission chain calling the webhooks, match conditions
  elastic-quota                 # pods counted from the watch's list, refused through the API server
  pod-resize                    # a configuration naming pods/resize taken where the subresource is not served
  gpu-class                     # a ConfigMap's watch followed, pods mutated through the API server
  enforcement                   # warnings relayed by the API server
  certificate-rotation          # the API server's webhook client following a new caBundle
  uninstall-safety
  helm-chart                    # the chart's kubeVersion against a real server
  blast-radius                  # the narrowed configurations' selectors and CEL conditions, compiled by the API server
  stalled-watches               # bookmarks' cadence: frozen watches replaced, the API server restarted, 410 on resume
)
until grep -q "^suite	integration (Kubernetes" "$CI_TIMINGS_FILE"; do sleep 5; done
echo "the default release's integration suite has ended: the floor's suite starts ($(date -u +%T))"
files=("${floor_tests[@]/#/test/integration/}")
# One cluster: beside the end-to-end suite, a second would only take CPU from it.
exec npm run test:integration -- --kubernetes="$floor" --clusters=1 "${files[@]/%/.test.ts}"
