#!/usr/bin/env bash
# Every Go build CI's suites need, in the order they first need them, so that they run while the
# suites wait on the API server instead of one after another (.ci/run starts this in the background
# in the idle scheduling class; a suite that needs a build under way waits for it: scripts/go-build.ts).
#
#   scripts/ci/prebuild.sh <floor Kubernetes version>
set -euo pipefail
cd "$(dirname "$0")/../.."
floor=${1:?usage: scripts/ci/prebuild.sh <floor Kubernetes version>}
cluster=(npx tsx scripts/cluster/cli.ts build)
"${cluster[@]}" --promtool                     # the integration suite: control plane, helm, promtool
"${cluster[@]}" --node                         # the end-to-end suite's node
"${cluster[@]}" --kubernetes="$floor"          # the floor subset's control plane (beside the end-to-end suite)
npx tsx scripts/upstream/koord-manager.ts >/dev/null               # the end-to-end migration beside koord-manager (warms the v1.8.0 oracle's packages)
npx tsx scripts/upstream/kthena-controller-manager.ts >/dev/null   # and beside Kthena's controller-manager (warms the Kthena oracle's)
npx tsx test/differential/build-oracles.ts     # the differential suite (after the end-to-end suite)
