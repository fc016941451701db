#!/usr/bin/env bash
# Check that every C file follows .clang-format (clang-format --dry-run).
# Exits 77 (skipped) where clang-format or git is not available.
set -u
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "clang-format not installed: skipped"; exit 77; }
files=$(git ls-files '*.c' '*.h' 2>/dev/null) || { echo "not a git checkout: skipped"; exit 77; }
bad=0
for f in $files; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (run clang-format -i $f)"
    bad=$((bad + 1))
  fi
done
echo "$(echo "$files" | wc -w) files checked, $bad not formatted"
[ "$bad" -eq 0 ]
