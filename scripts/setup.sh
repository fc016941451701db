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
# Python: the package (python/, docs/python.md) installs with pip into a
# virtual environment (python3-venv, python3-setuptools, python3-wheel);
# python3-torch runs the PyTorch exporter, python3-onnx (onnx.helper)
# writes an ONNX file as exporters other than torch do.  Without them their tests are
# skipped (with a message), so failing to install them is not fatal.
py_pkgs="python3-venv python3-setuptools python3-wheel python3-pip python3-torch python3-onnx"
py_missing=""
for p in $py_pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || py_missing="$py_missing $p"
done
if [ -n "$py_missing" ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  { $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $py_missing >/dev/null; } ||
    echo "setup: could not install$py_missing; the Python tests will be skipped" >&2
fi
dir="${1:-build}"; shift || true
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
