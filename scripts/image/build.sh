#!/usr/bin/env bash
# Builds the operator image with podman on a machine without a registry or a Docker engine:
# podman runs with runc and lowered ulimits, and the
# node:<major>-bookworm-slim base is stood in for by a debootstrapped Debian with the project's
# Node (scripts/runtime/install-node.sh, the release binary in /usr/local/bin as in the upstream
# image) and the host's npm, tagged with the upstream name so the Dockerfile stays as it is. The
# stand-in is made once per Node version and cached in podman's storage.
#
#   scripts/image/build.sh [tag]      (default localhost/admission-operator:dev)
#
# debootstrap fetches from the Debian archive the machine's apt sources name, or from
# $DEBIAN_MIRROR when set.
#
# Prints the CONTAINERS_CONF to export for later podman commands.
set -euo pipefail
cd "$(dirname "$0")/../.."
tag=${1:-localhost/admission-operator:dev}

for tool in podman runc debootstrap; do
  command -v "$tool" >/dev/null || { echo "build.sh needs $tool (apt-get install podman runc debootstrap)" >&2; exit 1; }
done

# A Debian archive for $1 the machine's apt already uses (DEBIAN_MIRROR overrides it): the first
# "deb" source, in sources.list, then sources.list.d/*.list and deb822 *.sources by name (under
# $2, default /etc/apt), that has the main component and whose suite is $1 or the host's own
# Debian release, so security archives, "-updates" suites and third-party repositories are
# passed over.
debian_mirror() {
  local release=$1 apt_dir=${2:-/etc/apt} host_release='' file
  if [ -n "${DEBIAN_MIRROR:-}" ]; then
    printf '%s\n' "${DEBIAN_MIRROR%/}"
    return 0
  fi
  if [ -r /etc/os-release ]; then
    # shellcheck disable=SC1091
    host_release=$(. /etc/os-release && [ "${ID:-}" = debian ] && printf '%s' "${VERSION_CODENAME:-}" || true)
  fi
  local -a files=()
  [ -f "$apt_dir/sources.list" ] && files+=("$apt_dir/sources.list")
  while IFS= read -r file; do files+=("$file"); done < <(
    find "$apt_dir/sources.list.d" -maxdepth 1 -type f \( -name '*.list' -o -name '*.sources' \) 2>/dev/null | LC_ALL=C sort
  )
  local mirror=''
  for file in "${files[@]}"; do
    mirror=$(awk -v suites=" ${release} ${host_release} " -v deb822="$([[ $file == *.sources ]] && echo 1 || echo 0)" '
      function wanted(type_list, uri_list, suite_list, component_list,   n, uris, s, i, j, ok) {
        if ((" " type_list " ") !~ / deb /) return ""
        if ((" " component_list " ") !~ / main /) return ""
        ok = 0
        n = split(suite_list, s, " ")
        for (i = 1; i <= n; i++) if (index(suites, " " s[i] " ") > 0) ok = 1
        if (!ok) return ""
        n = split(uri_list, uris, " ")
        for (j = 1; j <= n; j++) if (uris[j] ~ /^(https?:\/\/|file:\/)/) { sub(/\/+$/, "", uris[j]); return uris[j] }
        return ""
      }
      function paragraph(   found) {
        if (tolower(f["enabled"]) != "no") found = wanted(f["types"], f["uris"], f["suites"], f["components"])
        delete f
        key = ""
        if (found != "") { print found; exit }
      }
      /^[ \t]*#/ { next }
      deb822 == 1 {
        if ($0 ~ /^[ \t]*$/) { paragraph(); next }
        if ($0 ~ /^[ \t]/) { if (key != "") f[key] = f[key] " " $0; next }
        key = tolower($0); sub(/:.*/, "", key)
        value = $0; sub(/^[^:]*:[ \t]*/, "", value)
        f[key] = value
        next
      }
      deb822 == 0 && NF >= 3 {
        sub(/[ \t]#.*/, "")
        i = 2
        if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        components = ""
        for (j = i + 2; j <= NF; j++) components = components " " $j
        found = wanted($1, $i, $(i + 1), components)
        if (found != "") { print found; exit }
      }
      END { if (deb822 == 1) paragraph() }
    ' "$file")
    if [ -n "$mirror" ]; then
      printf '%s\n' "$mirror"
      return 0
    fi
  done
  echo "build.sh needs a Debian archive for ${release}: none of the machine's apt sources" \
    "(${apt_dir}/sources.list, ${apt_dir}/sources.list.d/*.list or *.sources) is one; set DEBIAN_MIRROR to its URL" >&2
  return 1
}

conf_dir="$PWD/.cache/podman"
mkdir -p "$conf_dir"
export CONTAINERS_CONF="$conf_dir/containers.conf"
printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=32768:32768"]\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n' \
  "$(ulimit -Hn)" "$(ulimit -Hn)" > "$CONTAINERS_CONF"

node_bin=$(scripts/runtime/install-node.sh)
node_version=$(scripts/runtime/install-node.sh --version)
base="docker.io/library/node:${node_version%%.*}-bookworm-slim"
# The label says which Node a stand-in holds, so a pinned version bump makes a new one.
if [ "$(podman image inspect --format '{{index .Config.Labels "org.nodejs.version"}}' "$base" 2>/dev/null)" != "$node_version" ]; then
  echo "making a local stand-in for $base (debootstrap + Node ${node_version} + the host's npm $("$node_bin/npm" --version))"
  mirror=$(debian_mirror bookworm)
  rootfs=$(mktemp -d)
  trap 'rm -rf "$rootfs"' EXIT
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >/dev/null
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  # The installation's npm and its global settings (the host's, linked by install-node.sh: a CA
  # file, below) go where that npm finds them in /usr/local.
  node_prefix=$(dirname "$node_bin")
  mkdir -p "$rootfs/usr/local/bin" "$rootfs/usr/local/lib/node_modules/npm" "$rootfs/usr/local/etc"
  cp "$node_bin/node" "$rootfs/usr/local/bin/node"
  cp -a "$node_prefix/lib/node_modules/npm/." "$rootfs/usr/local/lib/node_modules/npm/"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  [ -f "$node_prefix/etc/npmrc" ] && cp "$node_prefix/etc/npmrc" "$rootfs/usr/local/etc/npmrc"
  tar -C "$rootfs" -c . -C / etc/ssl/certs/ca-certificates.crt \
    | podman import -q --change 'CMD ["node"]' --change "LABEL org.nodejs.version=${node_version}" \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' - "$base" >/dev/null
fi

# The image's build stage has no .git: the commit `--version` prints comes in as a build argument.
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
[ "$commit" = unknown ] || git diff --quiet HEAD -- 2>/dev/null || commit="$commit-dirty"
podman build --pull=never --network=host -q --build-arg GIT_COMMIT="$commit" -t "$tag" . >/dev/null
echo "built $tag"
echo "CONTAINERS_CONF=$CONTAINERS_CONF"
