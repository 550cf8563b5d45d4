#!/usr/bin/env bash
# Makes a folder to link against an older glibc than this machine's, so that
# what is linked runs on that glibc and every newer one (the manylinux
# promise), without a container or an old distribution:
#
#   scripts/glibc-link-environment.sh DIR [--glibc 2.28]
#
# DIR receives glibc's libraries as stubs that carry that release's symbols
# and symbol versions (libc.so.6, libm.so.6, libpthread.so.0, libdl.so.2,
# librt.so.1, libutil.so.1, libresolv.so.2, ld-linux-x86-64.so.2), that
# release's crt1.o and libc_nonshared.a, and linker scripts for -lc, -lm,
# -lpthread, ... that name them. Linking with `-B DIR -L DIR` then binds
# every glibc symbol at its version in that release, or fails where the
# release lacks one. CMake's KILN_GLIBC_LINK_ENVIRONMENT uses such a folder
# (scripts/build-wheel.sh makes one in build-wheel/).
#
# The stubs come from Zig's C compiler (PyPI's `ziglang`, which
# requirements-dev.txt installs into .venv), which generates them for any
# glibc release from its own record of glibc's symbols: `zig cc -target
# x86_64-linux-gnu.2.28` links a small program and a small library, and its
# cache then holds what the folder needs. Only the stubs are used; Kiln is
# compiled and linked by clang as always.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
glibc=2.28
out=""
while (($#)); do
  case "$1" in
    --glibc) glibc="$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "glibc-link-environment.sh: error: unknown option '$1' (try --help)" >&2; exit 2 ;;
    *) out="$(realpath -m "$1")"; shift ;;
  esac
done
if [ -z "$out" ]; then
  echo "glibc-link-environment.sh: error: name the folder to make (try --help)" >&2
  exit 2
fi
if ! [[ "$glibc" =~ ^2\.[0-9]+$ ]]; then
  echo "glibc-link-environment.sh: error: '$glibc' is not a glibc release such as 2.28" >&2
  exit 2
fi
python="${PYTHON:-$root/.venv/bin/python}"
if ! "$python" -c 'import ziglang' 2>/dev/null; then
  echo "glibc-link-environment.sh: error: $python lacks ziglang; run scripts/setup.sh" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export ZIG_GLOBAL_CACHE_DIR="$work/cache" ZIG_LOCAL_CACHE_DIR="$work/local-cache"
target="x86_64-linux-gnu.$glibc"
printf 'int main(void) { return 0; }\n' > "$work/program.c"
printf 'int kiln_probe(void) { return 0; }\n' > "$work/library.c"
"$python" -m ziglang cc -target "$target" -o "$work/program" "$work/program.c"
"$python" -m ziglang cc -target "$target" -shared -fPIC -o "$work/library.so" "$work/library.c"

# One file of each name in Zig's cache (it builds each once per target).
found() {
  local matches
  mapfile -t matches < <(find "$ZIG_GLOBAL_CACHE_DIR" -name "$1" -type f)
  if [ "${#matches[@]}" -ne 1 ]; then
    echo "glibc-link-environment.sh: error: Zig's cache holds ${#matches[@]} files named $1, not one" >&2
    exit 1
  fi
  echo "${matches[0]}"
}

rm -rf "$out.partial"
mkdir -p "$out.partial"
for file in libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1 \
            libresolv.so.2 crt1.o libc_nonshared.a; do
  cp "$(found "$file")" "$out.partial/$file"
done
# Zig names the dynamic loader's stub after its library name, libld.so.2;
# its soname is the loader's, which is what a program records.
cp "$(found libld.so.2)" "$out.partial/ld-linux-x86-64.so.2"

# What -lc, -lm, ... find first: glibc's own linker scripts do the same.
cat > "$out.partial/libc.so" <<EOF
GROUP ( $out/libc.so.6 $out/libc_nonshared.a AS_NEEDED ( $out/ld-linux-x86-64.so.2 ) )
EOF
for library in m.so.6 pthread.so.0 dl.so.2 rt.so.1 util.so.1 resolv.so.2; do
  echo "INPUT ( $out/lib$library )" > "$out.partial/lib${library%.so.*}.so"
done
echo "$glibc" > "$out.partial/glibc-version"

rm -rf "$out"
mv "$out.partial" "$out"
echo "$out: glibc $glibc"
