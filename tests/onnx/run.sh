#!/usr/bin/env bash
# The ONNX importer on real torch.onnx.export output (test_export.py):
# run with Debian's python3-torch (/usr/bin/python3, not a pyenv python3
# earlier on PATH); exit 77 (skipped) with a message where it has no torch.
set -u
bin=$1
py=/usr/bin/python3
if [ -x "$py" ] && "$py" -c "import torch" 2>/dev/null; then
  exec "$py" "$(dirname "$0")/test_export.py" "$bin"
fi
echo "skipped: /usr/bin/python3 has no torch (install Debian's python3-torch)"
exit 77
