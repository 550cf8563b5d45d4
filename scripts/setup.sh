#!/usr/bin/env bash
# Sets up whatever is missing, then builds Kiln. Idempotent: a second run
# only rebuilds what changed.
#
#   1. Debian packages (LLVM 19 with its tools such as FileCheck, clang 19,
#      SQLite, libarchive, OpenSSL, hiredis, libcurl, CLI11, toml++, GoogleTest,
#      CMake, Ninja, ccache (which lets the wheel's build tree reuse build/'s
#      objects); Redis and nginx, which the remote cache tier's tests start
#      on loopback, and the openssl command, which makes the certificate of
#      their HTTPS server), with apt-get, only those not installed;
#   2. the CUDA toolkit must already be installed (CUDA_HOME, CUDA_PATH or
#      /usr/local/cuda): NVIDIA ships it, not Debian;
#   3. a Python virtual environment in .venv with requirements-dev.txt;
#   4. CMake configure and build in build/;
#   5. `kiln` on the virtual environment's PATH and `import kiln` working.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

debian_packages=(
  cmake ninja-build git pkg-config ccache
  clang-19 clang-format-19 lld-19 liblld-19-dev llvm-19-dev llvm-19-tools libclang-rt-19-dev
  libsqlite3-dev libarchive-dev libacl1-dev liblz4-dev libzstd-dev libssl-dev libcli11-dev
  libtomlplusplus-dev
  libhiredis-dev libcurl4-openssl-dev redis-server nginx-light openssl
  googletest libgtest-dev
  python3 python3-venv python3-dev
)
missing=()
for package in "${debian_packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]})); then
  say "Installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi

cuda_home="${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}"
if [ ! -x "$cuda_home/bin/ptxas" ]; then
  echo "error: no CUDA toolkit at $cuda_home (set CUDA_HOME); Kiln needs ptxas, fatbinary and libdevice from it" >&2
  exit 1
fi

python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  say "Creating the Python virtual environment .venv"
  "$python" -m venv .venv
fi
requirements_stamp=".venv/.kiln-requirements"
requirements_hash="$(sha256sum requirements-dev.txt | cut -d' ' -f1)"
if [ ! -f "$requirements_stamp" ] || [ "$(cat "$requirements_stamp")" != "$requirements_hash" ]; then
  say "Installing Python packages from requirements-dev.txt"
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -r requirements-dev.txt
  echo "$requirements_hash" > "$requirements_stamp"
fi

# A local wheelhouse for the integration tests, which install built wheels
# into fresh virtual environments without the network (pip --no-index).
if ! ls .venv/wheelhouse/numpy-*.whl >/dev/null 2>&1; then
  say "Downloading numpy into .venv/wheelhouse for offline tests"
  .venv/bin/python -m pip download --quiet --only-binary=:all: -d .venv/wheelhouse \
    "numpy==$(.venv/bin/python -c 'import numpy; print(numpy.__version__)')"
fi
# NumPy for the other CPythons this machine has (pyenv's, or python3.X on
# PATH), on which the stable-ABI tests run one build of the runtime and of a
# kernel module (tests/runtime/python/test_stable_abi.py looks in the same
# places).
for minor in 10 12 13; do
  other=""
  for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.$minor.*/bin/python3.$minor \
                   /usr/bin/python3.$minor /usr/local/bin/python3.$minor; do
    if [ -x "$candidate" ]; then other="$candidate"; break; fi
  done
  if [ -n "$other" ] && ! ls .venv/wheelhouse/numpy-*-cp3$minor-cp3$minor-*.whl >/dev/null 2>&1; then
    say "Downloading numpy for CPython 3.$minor into .venv/wheelhouse for offline tests"
    .venv/bin/python -m pip download --quiet --only-binary=:all: --python-version "3.$minor" \
      -d .venv/wheelhouse "numpy>=1.26"
  fi
done
# scikit-build-core too, for the CMake tests' pyproject.toml project
# (tests/integrations/cmake), built in a fresh environment.
if ! ls .venv/wheelhouse/scikit_build_core-*.whl >/dev/null 2>&1; then
  say "Downloading scikit-build-core into .venv/wheelhouse for offline tests"
  .venv/bin/python -m pip download --quiet --only-binary=:all: -d .venv/wheelhouse \
    "scikit-build-core==$(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("scikit-build-core"))')"
fi

# NVIDIA's CUDA wheels (kiln-compiler[cuda]: ptxas, fatbinary, libdevice),
# for the test that installs the compiler's wheel with them and no toolkit.
if ! ls .venv/wheelhouse/nvidia_cuda_nvcc-*.whl >/dev/null 2>&1; then
  say "Downloading NVIDIA's CUDA compiler wheels into .venv/wheelhouse for offline tests"
  .venv/bin/python -m pip download --quiet --only-binary=:all: -d .venv/wheelhouse \
    "nvidia-cuda-nvcc==13.5.37"
fi

# CUDA 12's ptxas (NVIDIA's CUDA 12 wheel), for the test that it assembles
# Kiln's PTX for every default architecture (tests/packaging).
if ! ls .venv/wheelhouse/nvidia_cuda_nvcc_cu12-*.whl >/dev/null 2>&1; then
  say "Downloading NVIDIA's CUDA 12 compiler wheel into .venv/wheelhouse for offline tests"
  .venv/bin/python -m pip download --quiet --only-binary=:all: --no-deps -d .venv/wheelhouse \
    "nvidia-cuda-nvcc-cu12==12.9.86"
fi

if [ ! -f build/build.ninja ]; then
  say "Configuring the build in build/"
  cmake -S . -B build -G Ninja \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DKILN_WARNINGS_AS_ERRORS=ON \
    -DPython3_EXECUTABLE="$root/.venv/bin/python"
fi
say "Building Kiln"
cmake --build build

# kiln on the venv's PATH, and the kiln Python package importable from it.
ln -sf "$root/build/driver/kiln" .venv/bin/kiln
site_packages="$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$root/build/python" > "$site_packages/kiln-dev.pth"
