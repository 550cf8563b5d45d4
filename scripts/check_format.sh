#!/usr/bin/env bash
# Fails, listing the files, when any C or C++ source differs from what
# clang-format-19 makes of it with the repository's .clang-format.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
format="${CLANG_FORMAT:-clang-format-19}"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.c' '*.cpp' '*.h')
else
  mapfile -t files < <(find . -path ./build -prune -o -path ./.venv -prune -o \
    \( -name '*.c' -o -name '*.cpp' -o -name '*.h' \) -print)
fi
unformatted=()
for file in "${files[@]}"; do
  [ -f "$file" ] || continue
  if ! "$format" --dry-run --Werror "$file" >/dev/null 2>&1; then
    unformatted+=("$file")
  fi
done
if [ "${#unformatted[@]}" -ne 0 ]; then
  echo "These files are not formatted as .clang-format asks; run $format -i on them:" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  exit 1
fi
echo "${#files[@]} files formatted as .clang-format asks"
