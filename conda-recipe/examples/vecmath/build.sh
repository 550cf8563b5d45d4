#!/bin/bash
# conda-forge's usual Python build; scikit-build-core runs CMake with
# CMAKE_ARGS, where Kiln's activation script put -DKiln_DIR, and kiln builds
# for CUDAARCHS (cuda-nvcc's list, rewritten for Kiln by the same script).
set -euxo pipefail
"${PYTHON}" -m pip install . -vv --no-deps --no-build-isolation
