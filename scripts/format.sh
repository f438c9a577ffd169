#!/usr/bin/env bash
# Formats every C++ and CUDA source of the tree with .clang-format, or, with --check, lists the
# files that differ from it and fails (the test command runs the check). clang-format is Debian
# 12's (14), installed by scripts/setup.sh; another version may format some lines differently.
#
#   scripts/format.sh            format in place
#   scripts/format.sh --check    fail when a file is not formatted
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
[ "${1:-}" = "--check" ] && check=1
mapfile -t files < <(git ls-files '*.h' '*.cpp' '*.cu' '*.cuh')
if [ "$check" = 0 ]; then
  printf '%s\0' "${files[@]}" | xargs -0 -n 50 -P "$(nproc 2>/dev/null || echo 2)" clang-format -i
  exit 0
fi
unformatted=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
done
if [ "${#unformatted[@]}" -gt 0 ]; then
  echo "format: ${#unformatted[@]} files differ from .clang-format (scripts/format.sh formats them):"
  printf '  %s\n' "${unformatted[@]}"
  exit 1
fi
echo "format: all ${#files[@]} sources follow .clang-format"
