#!/usr/bin/env bash
# Builds the operator image with podman on a machine without a registry or a Docker engine
# (see shared notes on container builds): podman runs with runc and lowered ulimits, and the
# node:20-bookworm-slim base is stood in for by a debootstrapped Debian with the host's Node 20,
# tagged with the upstream name so the Dockerfile stays as it is. The stand-in is made once and
# cached in podman's storage.
#
#   scripts/image/build.sh [tag]      (default localhost/admission-operator:dev)
#
# Prints the CONTAINERS_CONF to export for later podman commands.
set -euo pipefail
cd "$(dirname "$0")/../.."
tag=${1:-localhost/admission-operator:dev}

for tool in podman runc debootstrap; do
  command -v "$tool" >/dev/null || { echo "build.sh needs $tool (apt-get install podman runc debootstrap)" >&2; exit 1; }
done

conf_dir="$PWD/.cache/podman"
mkdir -p "$conf_dir"
export CONTAINERS_CONF="$conf_dir/containers.conf"
printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=32768:32768"]\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n' \
  "$(ulimit -Hn)" "$(ulimit -Hn)" > "$CONTAINERS_CONF"

base=docker.io/library/node:20-bookworm-slim
if ! podman image exists "$base"; then
  echo "making a local stand-in for $base (debootstrap + the host's Node $(node --version))"
  rootfs=$(mktemp -d)
  trap 'rm -rf "$rootfs"' EXIT
  mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  debootstrap --variant=minbase bookworm "$rootfs" "${mirror:-http://deb.debian.org/debian}" >/dev/null
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  extra=()
  [ -f /usr/etc/npmrc ] && extra+=(usr/etc/npmrc)
  tar -C "$rootfs" -c . -C / usr/bin/node usr/bin/npm usr/bin/npx usr/lib/node_modules/npm \
      etc/ssl/certs/ca-certificates.crt "${extra[@]}" \
    | podman import -q --change 'CMD ["node"]' \
        --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' - "$base" >/dev/null
fi

podman build --pull=never --network=host -q -t "$tag" . >/dev/null
echo "built $tag"
echo "CONTAINERS_CONF=$CONTAINERS_CONF"
