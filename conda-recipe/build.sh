#!/bin/bash
# Builds Kiln once for both outputs (install-kiln-runtime.sh and
# install-kiln-compiler.sh install from this tree), with conda-build's variables:
# SRC_DIR, PREFIX (host), BUILD_PREFIX, PYTHON, SP_DIR, CMAKE_ARGS, CPU_COUNT.
#
# KILN_BUILD_DIR names a tree built beforehand (scripts/setup.sh's build/,
# as Kiln's CI does in tests/integrations/conda): it is configured again,
# which restores its install rules, and not built here.
set -euxo pipefail

if [[ -n "${KILN_BUILD_DIR:-}" ]]; then
  cmake "${KILN_BUILD_DIR}"
  exit 0
fi

build_dir="${SRC_DIR}/build-conda"
# The kiln package goes where this Python looks for packages.
python_dir="${SP_DIR#"${PREFIX}"/}"

# CMAKE_ARGS (from the compilers' and cuda-nvcc's activation) carries the
# compilers' tools, CMAKE_INSTALL_PREFIX=$PREFIX and the find root paths.
# The CUDA toolkit Kiln calls is the build prefix's (ptxas, fatbinary, nvcc
# from cuda-nvcc, libdevice from cuda-nvvm); nvJitLink is the host's.
# shellcheck disable=SC2086  # CMAKE_ARGS is a list of words
cmake -S "${SRC_DIR}" -B "${build_dir}" -G Ninja ${CMAKE_ARGS:-} \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="${PREFIX}" \
  -DKILN_BUILD_TESTS=OFF \
  -DKILN_INSTALL_PYTHONDIR="${python_dir}" \
  -DPython3_EXECUTABLE="${PYTHON}" \
  -DCUDAToolkit_ROOT="${BUILD_PREFIX}" \
  -DKILN_NVJITLINK_LIBRARY="${PREFIX}/lib/libnvJitLink.so"
cmake --build "${build_dir}" --parallel "${CPU_COUNT:-1}"
