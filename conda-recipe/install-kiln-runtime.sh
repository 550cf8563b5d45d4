#!/bin/bash
# kiln-runtime: the runtime component alone (the kiln Python package as built
# kernel modules need it), and its dist-info (distribution `kiln-runtime`).
set -euxo pipefail
source "${RECIPE_DIR}/kiln_install_common.sh"

install_component runtime
write_dist_info kiln-runtime "Requires-Dist: numpy>=1.26"
