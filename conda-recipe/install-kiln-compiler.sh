#!/bin/bash
# kiln-compiler: the compiler component (bin/kiln, lib/cmake/Kiln, kiln/__main__.py,
# kiln/setuptools.py, kiln/_paths.py), its dist-info with Kiln's entry points
# (scikit-build-core's cmake.root, the setuptools hook for [tool.kiln]), and
# the activation scripts. The runtime comes from kiln-runtime.
set -euxo pipefail
source "${RECIPE_DIR}/kiln_install_common.sh"

install_component compiler
write_dist_info kiln-compiler "Requires-Dist: kiln-runtime==${PKG_VERSION}" \
'[cmake.root]
Kiln = kiln

[setuptools.finalize_distribution_options]
kiln = kiln.setuptools:finalize_distribution_options
'

# Named to run after cuda-nvcc's ~cuda-nvcc_activate.sh, whose CUDAARCHS
# they read: conda runs activation scripts in the byte order of their names
# ('~~' sorts after '~c'), deactivation scripts in reverse.
mkdir -p "${PREFIX}/etc/conda/activate.d" "${PREFIX}/etc/conda/deactivate.d"
cp "${RECIPE_DIR}/activate.sh" "${PREFIX}/etc/conda/activate.d/~~kiln_activate.sh"
cp "${RECIPE_DIR}/deactivate.sh" "${PREFIX}/etc/conda/deactivate.d/~~kiln_deactivate.sh"
