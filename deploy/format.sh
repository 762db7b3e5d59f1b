#!/usr/bin/env bash
# Formats the C++ sources with the repository's .clang-format (clang-format 14, Debian 12).
#
#   deploy/format.sh           # rewrite the files in place
#   deploy/format.sh --check   # list the files that differ, exit 1 if any (CI)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v clang-format > /dev/null || { echo "format.sh: clang-format is not installed" >&2; exit 1; }
mapfile -t files < <(git ls-files -- 'src/*.cpp' 'src/*.hpp' 'include/*.hpp' 'tests/*.cpp' 'tests/*.hpp' 'bench/*.cpp')
if [[ "${1:-}" == --check ]]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run -Werror "$f" > /dev/null 2>&1 || bad+=("$f")
  done
  if ((${#bad[@]} > 0)); then
    printf 'format.sh: not formatted (run deploy/format.sh):\n'
    printf '  %s\n' "${bad[@]}"
    exit 1
  fi
  echo "format.sh: ${#files[@]} files formatted"
else
  clang-format -i "${files[@]}"
fi
