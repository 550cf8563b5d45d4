#!/bin/bash
# Kiln's activation script, installed as etc/conda/activate.d/~~kiln_activate.sh
# (after cuda-nvcc's ~cuda-nvcc_activate.sh). In conda-build only
# (CONDA_BUILD=1), as cuda-nvcc's:
#
# 1. CUDAARCHS, which kiln build, add_python_kernels() and kiln.setuptools
#    read when no architectures are given. cuda-nvcc sets it to conda-forge's
#    list, e.g. for CUDA 13
#      75-real;80-real;86-real;87-real;89-real;90a-real;100f-real;103f-real;
#      110-real;120a-real;121f-real;121-virtual
#    which Kiln refuses: it builds no architecture-specific (90a) or family
#    (100f) cubins, and embeds PTX up to compute_90 (LLVM 19's newest). So the
#    list is rewritten for Kiln: 90a-real and 100f-real become the portable
#    90-real and 100-real cubins (which run on the same GPUs), N-virtual and
#    the PTX of a plain N above 90 become 90-virtual (which the driver
#    compiles for any newer GPU). Other entries are kept (Kiln judges them).
#    The list cuda-nvcc set is kept in KILN_CUDAARCHS_BACKUP and restored on
#    deactivation. Unset, CUDAARCHS stays unset: Kiln's default is the same
#    set. Set KILN_KEEP_CUDAARCHS=1 to leave it alone (a package whose CUDA
#    C++ needs 90a then passes Kiln its own list: ARCHITECTURES, archs=...).
# 2. CMAKE_ARGS gains -DKiln_DIR=<this prefix>/lib/cmake/Kiln, so that
#    find_package(Kiln CONFIG) finds the build prefix's Kiln even where
#    conda-build's find root paths name only the host prefix (cross builds).

_kiln_arch_list_for_kiln() {
  local entry number kind result="" ptx=""
  local IFS=';, '
  for entry in $1; do
    case "${entry}" in
      *-real) kind=real; number="${entry%-real}" ;;
      *-virtual) kind=virtual; number="${entry%-virtual}" ;;
      *) kind=both; number="${entry}" ;;
    esac
    case "${number}" in
      *[0-9][af]) number="${number%?}" ;;
    esac
    case "${number}" in
      '' | *[!0-9]*) result="${result};${entry}"; continue ;;  # all, native, ...
    esac
    if [[ "${number}" -le 90 ]]; then
      case "${kind}" in
        real) result="${result};${number}-real" ;;
        virtual) result="${result};${number}-virtual" ;;
        both) result="${result};${number}" ;;
      esac
    else
      [[ "${kind}" != virtual ]] && result="${result};${number}-real"
      [[ "${kind}" != real ]] && ptx="90-virtual"
    fi
  done
  [[ -n "${ptx}" && ";${result};" != *";90-virtual;"* && ";${result};" != *";90;"* ]] && result="${result};${ptx}"
  # Drop repeated entries, keeping the first.
  printf '%s' "${result#;}" | tr ';' '\n' | awk '!seen[$0]++' | paste -sd ';' -
}

if [[ "${CONDA_BUILD:-0}" == "1" ]]; then
  if [[ -n "${CUDAARCHS:-}" && "${KILN_KEEP_CUDAARCHS:-0}" != "1" ]]; then
    _kiln_archs="$(_kiln_arch_list_for_kiln "${CUDAARCHS}")"
    if [[ "${_kiln_archs}" != "${CUDAARCHS}" ]]; then
      [[ -z "${KILN_CUDAARCHS_BACKUP+x}" ]] && export KILN_CUDAARCHS_BACKUP="${CUDAARCHS}"
      export CUDAARCHS="${_kiln_archs}"
      echo "kiln: CUDAARCHS for Kiln: ${CUDAARCHS} (cuda-nvcc's: ${KILN_CUDAARCHS_BACKUP})"
    fi
    unset _kiln_archs
  fi
  if [[ -z "${KILN_CMAKE_ARGS_BACKUP+x}" ]]; then
    export KILN_CMAKE_ARGS_BACKUP="${CMAKE_ARGS-UNSET}"
  fi
  export CMAKE_ARGS="${CMAKE_ARGS:+${CMAKE_ARGS} }-DKiln_DIR=${CONDA_PREFIX}/lib/cmake/Kiln"
fi
unset -f _kiln_arch_list_for_kiln
