"""Loads and stores with a cache operator (cuda.ldca, ldcg, ldcs, ldlu, ldcv,
cuda.stcg, stcs, stwb, stwt): on a GPU, PTX's ld.global.<operator> and
st.global.<operator> of the element's width; on the CPU engine, the element
loaded or stored, with the index checks and negative indices of a[i]."""

import numpy as np
import pytest

import kiln_cpu

LOADS = ["ldca", "ldcg", "ldcs", "ldlu", "ldcv"]
STORES = ["stcg", "stcs", "stwb", "stwt"]
DTYPES = ["int8", "uint8", "int16", "uint16", "float16", "int32", "uint32", "float32", "int64", "uint64",
          "float64"]


def module_source():
    lines = ["from numba import cuda", ""]
    for dtype in DTYPES:
        for load in LOADS:
            lines += [f'@cuda.jit("void({dtype}[::1], {dtype}[::1])")',
                      f"def {load}_{dtype}(r, x):",
                      "    for i in range(len(r)):",
                      f"        r[i] = cuda.{load}(x, i - len(x))",  # negative indices count from the end
                      "",
                      f'@cuda.jit("void({dtype}[:, ::1], {dtype}[:, ::1])")',
                      f"def {load}_{dtype}_2d(r, x):",
                      "    for i in range(x.shape[0]):",
                      "        for j in range(x.shape[1]):",
                      f"            r[i, j] = cuda.{load}(x, (i, j))",
                      ""]
        for store in STORES:
            lines += [f'@cuda.jit("void({dtype}[::1], {dtype}[::1])")',
                      f"def {store}_{dtype}(r, x):",
                      "    for i in range(len(r)):",
                      f"        cuda.{store}(r, i, x[i])",
                      "",
                      f'@cuda.jit("void({dtype}[:, ::1], {dtype}[:, ::1])")',
                      f"def {store}_{dtype}_2d(r, x):",
                      "    for i in range(x.shape[0]):",
                      "        for j in range(x.shape[1]):",
                      f"            cuda.{store}(r, (i, j), x[i, j])",
                      ""]
    lines += ['@cuda.jit("void(float32[::1], float32[::1], int64)")',
              "def load_at(r, x, i):",
              "    r[0] = cuda.ldcs(x, i)",
              "",
              '@cuda.jit("void(float64[::1], int32[::1])")',
              "def store_converting(r, x):",
              "    cuda.stcg(r, 0, x[0])",
              ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return kiln_cpu.compile_source(module_source(), tmp_path_factory.mktemp("hints"), name="cache_hints")


@pytest.mark.parametrize("dtype", DTYPES)
def test_loads_and_stores_move_every_element(built, dtype):
    x = np.arange(1, 13).astype(dtype)
    for name in LOADS + STORES:
        r = np.zeros_like(x)
        getattr(built, f"{name}_{dtype}")[1, 1](r, x)
        np.testing.assert_array_equal(r, x, err_msg=f"cuda.{name} of {dtype}")
        r2, x2 = np.zeros((3, 4), dtype), x.reshape(3, 4)
        getattr(built, f"{name}_{dtype}_2d")[1, 1](r2, x2)
        np.testing.assert_array_equal(r2, x2, err_msg=f"cuda.{name} of 2-D {dtype}")


def test_an_index_out_of_bounds_is_an_index_error(built):
    x = np.arange(4, dtype=np.float32)
    r = np.zeros(1, np.float32)
    built.load_at[1, 1](r, x, -4)
    assert r[0] == 0.0
    with pytest.raises(IndexError):
        built.load_at[1, 1](r, x, 4)


def test_a_stored_value_converts_to_the_element_type(built):
    r = np.zeros(1, np.float64)
    built.store_converting[1, 1](r, np.array([-7], np.int32))
    assert r[0] == -7.0


def test_gpus_get_the_cache_operator_of_each_call(tmp_path, kiln):
    source = tmp_path / "cache_hints.py"
    source.write_text(module_source())
    built = kiln("build", source, "--emit", "ptx", "--arch", "80", "-o", tmp_path / "ptx", "--no-cache")
    assert built.returncode == 0, built.stderr[-2000:]
    ptx = "\n".join(path.read_text() for path in (tmp_path / "ptx").glob("*.ptx"))
    bits = {dtype: np.dtype(dtype).itemsize * 8 for dtype in DTYPES}
    missing = [f"{op}.global.{name[2:]}.b{width}" for name in LOADS + STORES for width in set(bits.values())
               for op in [name[:2]] if f"{op}.global.{name[2:]}.b{width}" not in ptx]
    assert not missing, f"no {missing} in the PTX"
    # and ptxas takes them for every architecture family
    assembled = kiln("build", source, "--emit", "fatbin", "--arch", "75,90,100-real", "-o", tmp_path / "fatbin",
                     "--no-cache")
    assert assembled.returncode == 0, assembled.stderr[-2000:]
