#!/usr/bin/env bash
# Installs everything blockq needs on a fresh Debian 12 machine, idempotently:
# Debian packages (libraries, cpp-httplib for `blockq serve`, the Vulkan
# loader, SwiftShader via chromium-common, headless Chromium for the browser
# check, Vulkan's headers and spirv-tools for bench/vkstats) and the pinned npm
# packages (Dawn).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

apt_pkgs=(cmake ninja-build g++ clang pkg-config libgtest-dev libgmock-dev libbenchmark-dev
          libcli11-dev nlohmann-json3-dev libfmt-dev libcpp-httplib-dev libvulkan1 chromium-common chromium
          libvulkan-dev spirv-tools)
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# npm folders with a committed lockfile: install exactly what the lock says.
npm_ci() {
  local dir=$1 stamp=$1/node_modules/.blockq-lock-stamp
  if [ -f "$stamp" ] && cmp -s "$dir/package-lock.json" "$stamp"; then return; fi
  echo "setup: npm ci in ${dir#$root/}"
  (cd "$dir" && npm ci --no-audit --no-fund --omit=optional "${@:2}")
  cp "$dir/package-lock.json" "$stamp"
}
npm_ci "$root/third_party/dawn"
for d in "$root"/third_party/*/; do
  d=${d%/}
  [ "$d" = "$root/third_party/dawn" ] && continue
  [ -f "$d/package-lock.json" ] && npm_ci "$d"
done
exit 0
