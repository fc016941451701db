#!/usr/bin/env bash
# Install what is missing on a Debian machine, then configure and build.
# Usage: scripts/setup.sh [build-dir] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs="build-essential cmake pkg-config libglpk-dev libhwloc-dev libuv1-dev zlib1g-dev libcjson-dev libxxhash-dev libgsl-dev libprotobuf-c-dev protobuf-c-compiler"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "Installing:$missing" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
# python3-torch runs the PyTorch exporter's tests; without it they are
# skipped (with a message), so failing to install it is not fatal.
if ! dpkg-query -W -f='${Status}' python3-torch 2>/dev/null | grep -q "install ok installed"; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  { $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-torch >/dev/null; } ||
    echo "setup: could not install python3-torch; the exporter's tests will be skipped" >&2
fi
dir="${1:-build}"; shift || true
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
