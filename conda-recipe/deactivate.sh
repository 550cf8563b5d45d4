#!/bin/bash
# Kiln's deactivation script (etc/conda/deactivate.d/~~kiln_deactivate.sh):
# undoes ~~kiln_activate.sh, before cuda-nvcc's deactivation runs.
if [[ -n "${KILN_CUDAARCHS_BACKUP+x}" ]]; then
  export CUDAARCHS="${KILN_CUDAARCHS_BACKUP}"
  unset KILN_CUDAARCHS_BACKUP
fi
if [[ -n "${KILN_CMAKE_ARGS_BACKUP+x}" ]]; then
  if [[ "${KILN_CMAKE_ARGS_BACKUP}" == "UNSET" ]]; then
    unset CMAKE_ARGS
  else
    export CMAKE_ARGS="${KILN_CMAKE_ARGS_BACKUP}"
  fi
  unset KILN_CMAKE_ARGS_BACKUP
fi
