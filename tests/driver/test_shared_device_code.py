"""A build for several PTX targets optimizes each kernel's LLVM IR once, for
its lowest target, and gives that IR to every target's code generation. The
oracle is the build for one target alone, which optimizes for that target:
for every kernel of the examples, the differential tester's regressions and
the kernels below (atomics, warp collectives, half and bfloat16 arithmetic,
cooperative groups, libdevice), the IR of each target must be exactly what
optimizing for that target gives."""

import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]

# Where lowering or libdevice could differ by architecture.
TARGET_SENSITIVE = """\
import math

from numba import cuda, float16, float32, float64, int32, void
from numba.cuda import cg


@cuda.jit(void(float64[::1], float64[::1]))
def atomics(total, values):
    i = cuda.grid(1)
    if i < values.size:
        cuda.atomic.add(total, 0, values[i])
        cuda.atomic.max(total, 1, values[i])


@cuda.jit(void(int32[::1]))
def warp_sums(out):
    value = cuda.threadIdx.x
    for offset in (16, 8, 4, 2, 1):
        value += cuda.shfl_down_sync(0xFFFFFFFF, value, offset)
    if cuda.laneid == 0:
        out[cuda.threadIdx.x // 32] = value
    out[0] += cuda.popc(cuda.ballot_sync(0xFFFFFFFF, value > 3))


@cuda.jit(void(float16[::1], float16[::1]))
def halves(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * x[i] + float16(1)


@cuda.jit(void(float32[::1]))
def grid_synced(out):
    g = cg.this_grid()
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 1
    g.sync()
    if i < out.size:
        out[i] += out[(i + 1) % out.size]


@cuda.jit(void(float32[::1], float64[::1]))
def math_functions(out, x):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = math.sin(x[i]) + math.erf(x[i]) + math.pow(float32(x[i]), float32(0.5))
"""


def corpus(tmp_path):
    sources = sorted((REPO / "examples").glob("*.py"))
    sources += sorted((REPO / "tests" / "differential" / "regressions").glob("*.py"))
    own = tmp_path / "target_sensitive.py"
    own.write_text(TARGET_SENSITIVE)
    return sources + [own]


def llvm_ir(kiln, source, out, *arch):
    result = kiln("build", source, "--emit", "llvm", "-o", out, "--no-cache", *arch)
    assert result.returncode == 0, f"{source.name} did not build:\n{result.stderr}"
    return {path.name: path.read_text() for path in out.glob("*.ll")}


def target_of(name):
    return int(re.search(r"\.sm_(\d+)\.ll$", name)[1])


def test_every_targets_ir_is_what_optimizing_for_that_target_gives(kiln, tmp_path):
    compared = 0
    for source in corpus(tmp_path):
        shared = llvm_ir(kiln, source, tmp_path / source.stem / "all")
        if not shared:
            continue  # kernels without signatures: nothing to build ahead of time
        targets = sorted({target_of(name) for name in shared})
        assert len(targets) > 1, f"the default architectures have one PTX target: {targets}"
        for arch in targets:
            alone = llvm_ir(kiln, source, tmp_path / source.stem / str(arch), "--arch", str(arch))
            for name, text in alone.items():
                assert shared[name] == text, (
                    f"{source.name}: {name} built with the other targets differs from {name} "
                    f"built for sm_{arch} alone")
                compared += 1
    assert compared >= 100, f"only {compared} specializations were compared"
