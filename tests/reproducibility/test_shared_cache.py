"""Two checkouts of one project share every cache entry: the first build of
the second checkout, with the same KILN_CACHE_DIR, compiles nothing
(`kiln build --json` reports each step's cache outcome), and builds the
module the first checkout built."""

import json
import subprocess

import pytest

from repro_builds import EXT_SUFFIX, assert_same_build, kiln_binary, read_tree, write_checkout


def build_with_cache(checkout, out, cache, flags):
    result = subprocess.run(
        [kiln_binary(), "build", checkout / "rp" / "k_basic.py", "--module", "rp.k_basic",
         "-o", out, "--ext-suffix", EXT_SUFFIX, "--cache-dir", cache, "--json", *flags],
        cwd=out.parent, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    steps = [(kernel["name"], step) for kernel in report["kernels"] for step in kernel["steps"]]
    steps += [(image["name"], step) for image in report["images"] for step in image["steps"]]
    return steps, read_tree(out)


@pytest.mark.parametrize("flags", [(), ("--lineinfo",), ("--debug",)],
                         ids=["plain", "lineinfo", "debug"])
def test_the_first_build_of_a_second_checkout_is_all_cache_hits(tmp_path, flags):
    cache = tmp_path / "cache"
    first = write_checkout(tmp_path / "first")
    second = write_checkout(tmp_path / "elsewhere" / "second")
    filled, reference = build_with_cache(first, tmp_path / "out-first", cache, flags)
    assert filled and all(step["cache"] == "miss" for _, step in filled), filled
    steps, built = build_with_cache(second, tmp_path / "out-second", cache, flags)
    compiled = [f"{name}: {step['step']} {step['target']} ({step['cache']})"
                for name, step in steps if step["cache"] != "hit"]
    assert steps and not compiled, (
        "the second checkout compiled what the first had stored:\n  " + "\n  ".join(compiled))
    assert_same_build(reference, built, "building the second checkout from the cache")


LINKING_KERNELS = '''\
from numba import cuda, float64, void

twice = cuda.declare_device("twice", "float64(float64)", link=["including.cu"])


@cuda.jit(void(float64[::1], float64[::1]))
def doubled(r, x):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = twice(x[i])
'''

INCLUDING_CU = '''\
#include <factor.cuh>

extern "C" __device__ int twice(double *result, double x) {
  *result = x * FACTOR;
  return 0;
}
'''


def write_linking_checkout(folder):
    """A module whose kernel links CUDA C++ that includes a header of the
    checkout's own include folder."""
    (folder / "rp" / "headers").mkdir(parents=True)
    (folder / "rp" / "__init__.py").write_text("")
    (folder / "rp" / "k_basic.py").write_text(LINKING_KERNELS)
    (folder / "rp" / "including.cu").write_text(INCLUDING_CU)
    (folder / "rp" / "headers" / "factor.cuh").write_text("#define FACTOR 2\n")
    return folder


def test_a_second_checkout_with_linked_files_builds_the_same_and_hits_the_cache(tmp_path):
    """The files kernels link and the --link-include folders enter the keys
    as the build records source paths, relative to the project."""
    cache = tmp_path / "cache"
    first = write_linking_checkout(tmp_path / "first")
    second = write_linking_checkout(tmp_path / "elsewhere" / "second")
    filled, reference = build_with_cache(
        first, tmp_path / "out-first", cache, ("--link-include", first / "rp" / "headers"))
    assert filled and all(step["cache"] == "miss" for _, step in filled), filled
    steps, built = build_with_cache(
        second, tmp_path / "out-second", cache, ("--link-include", second / "rp" / "headers"))
    compiled = [f"{name}: {step['step']} {step['target']} ({step['cache']})"
                for name, step in steps if step["cache"] != "hit"]
    assert steps and not compiled, (
        "the second checkout compiled what the first had stored:\n  " + "\n  ".join(compiled))
    assert_same_build(reference, built, "building the second checkout from the cache")
    _, compiled_anew = build_with_cache(
        second, tmp_path / "out-anew", tmp_path / "empty-cache",
        ("--link-include", second / "rp" / "headers"))
    assert_same_build(reference, compiled_anew, "compiling the second checkout's linked files")
