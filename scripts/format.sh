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
# Fifty files per clang-format and one per core (about 3 s for the tree on 2 cores, where a
# process per file took 29 s); a file that differs is named in its "code should be
# clang-formatted" errors, and clang-format goes on to the next file after one. Any other
# failure (clang-format missing, a file it cannot read) fails the check with its output.
status=0
report=$(printf '%s\0' "${files[@]}" |
  xargs -0 -n 50 -P "$(nproc 2>/dev/null || echo 2)" clang-format --dry-run -Werror 2>&1) || status=$?
mapfile -t unformatted < <(printf '%s\n' "$report" |
  sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
if [ "$status" -ne 0 ] && [ "${#unformatted[@]}" -eq 0 ]; then
  printf '%s\n' "$report" | tail -20
  echo "format: clang-format failed (exit $status)"
  exit 1
fi
if [ "${#unformatted[@]}" -gt 0 ]; then
  echo "format: ${#unformatted[@]} files differ from .clang-format (scripts/format.sh formats them):"
  printf '  %s\n' "${unformatted[@]}"
  exit 1
fi
echo "format: all ${#files[@]} sources follow .clang-format"
