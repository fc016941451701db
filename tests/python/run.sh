#!/usr/bin/env bash
# Run the exporter's tests with a Python that has torch (Debian's
# python3-torch lives in /usr/bin/python3's path); exit 77 (skipped) with
# a message where none has it.
set -u
bin=$1
for py in /usr/bin/python3 python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c "import torch" 2>/dev/null; then
    exec "$py" "$(dirname "$0")/test_exporter.py" "$bin"
  fi
done
echo "skipped: no python3 with torch (install Debian's python3-torch)"
exit 77
