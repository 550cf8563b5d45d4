# shellcheck shell=bash
# Sourced by install-kiln-runtime.sh and install-kiln-compiler.sh.

# The tree build.sh built (or KILN_BUILD_DIR, a tree built beforehand).
kiln_build_dir="${KILN_BUILD_DIR:-${SRC_DIR}/build-conda}"

# Both components go to KILN_INSTALL_PYTHONDIR, fixed when the tree was
# configured; it must be this Python's site-packages.
python_dir="$(sed -n 's/^KILN_INSTALL_PYTHONDIR:[A-Z]*=//p' "${kiln_build_dir}/CMakeCache.txt")"
if [[ "${PREFIX}/${python_dir}" != "${SP_DIR}" ]]; then
  echo "error: ${kiln_build_dir} installs the kiln package into ${python_dir}, not ${SP_DIR#"${PREFIX}"/}" >&2
  exit 1
fi

# install_component <component>: `cmake --install` of one component; sets
# `installed` to what it added to site-packages (relative paths, sorted).
install_component() {
  local before
  before=""
  if [[ -d "${SP_DIR}" ]]; then
    before="$(cd "${SP_DIR}" && find . -type f | sort)"
  fi
  cmake --install "${kiln_build_dir}" --component "$1" --prefix "${PREFIX}"
  installed="$(comm -13 <(echo "${before}") <(cd "${SP_DIR}" && find . -type f | sort) | sed 's|^\./||')"
}

# write_dist_info <distribution> <Requires-Dist lines> [<entry_points.txt>]:
# the .dist-info pip would have written for what install_component added,
# so that pip, `pip check` and importlib.metadata (entry points) see it.
write_dist_info() {
  local name="${1//-/_}-${PKG_VERSION}.dist-info"
  local info="${SP_DIR}/${name}"
  mkdir -p "${info}"
  printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n%s\n' "$1" "${PKG_VERSION}" "$2" > "${info}/METADATA"
  echo conda > "${info}/INSTALLER"
  if [[ -n "${3:-}" ]]; then
    printf '%s' "$3" > "${info}/entry_points.txt"
  fi
  {
    if [[ -n "${installed}" ]]; then
      printf '%s\n' "${installed}" | sed 's/$/,,/'
    fi
    (cd "${SP_DIR}" && find "${name}" -type f ! -name RECORD | sort | sed 's/$/,,/')
    echo "${name}/RECORD,,"
  } > "${info}/RECORD"
}
