"""The kernels bench/cpu_engine_speed.py runs, and the process that runs them.

One case per seed kernel of examples/: how to make its inputs for a problem
size, its launch configuration, how to launch it (the same code drives
Kiln's CPU engine, through modules built with `kiln build --module` and
imported with KILN_TARGET=cpu, and Numba's CUDA simulator, which both launch Numba-style: `module.kernel[grid, block](...)`,
`module.ufunc(...)`, `module.reduction(...)`), and a vectorized NumPy
version of the same computation.

    bench/.venv/bin/python bench/cpu_engine_cases.py kiln --scale 1 --repeats 5
    NUMBA_ENABLE_CUDASIM=1 bench/.venv/bin/python bench/cpu_engine_cases.py sim --scale 1

`kiln` times Kiln's CPU engine and NumPy at the full sizes (and checks
Kiln's results against NumPy's); `sim` times the simulator at the small
sizes. Each prints one JSON line per case, with every run's time.
"""

import argparse
import importlib.util
import json
import math
import os
import pathlib
import subprocess
import sys
import time
import warnings

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
SIM = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def blocks_for(n, threads):
    return (n + threads - 1) // threads


class Case:
    """name; example module; `make(n)` -> state dict; `launch(module, state)`;
    `numpy(state)`; `check(state)` -> error message or None; `full` and `sim`
    problem sizes (in `unit`s); `config(n)` -> text of the launch."""

    def __init__(self, name, example, unit, full, sim, make, launch, numpy, check, config, reset=None):
        self.name, self.example, self.unit = name, example, unit
        self.full, self.sim = full, sim
        self.make, self.launch, self.numpy, self.check, self.config = make, launch, numpy, check, config
        self.reset = reset


# --- vector_add -------------------------------------------------------------

def _vadd_make(n):
    x = np.arange(n, dtype=np.float32)
    return {"n": n, "x": x, "y": 2 * x, "out": np.zeros(n, np.float32), "ref": np.zeros(n, np.float32)}


def _vadd_launch(m, s):
    m.vector_add[blocks_for(s["n"], 256), 256](s["out"], s["x"], s["y"])


def _vadd_numpy(s):
    np.add(s["x"], s["y"], out=s["ref"])


def _close(a, b, rtol=1e-6, atol=0.0):
    if np.allclose(a, b, rtol=rtol, atol=atol):
        return None
    bad = np.count_nonzero(~np.isclose(a, b, rtol=rtol, atol=atol))
    return f"{bad} of {np.size(a)} elements differ from NumPy's"


# --- mandelbrot -------------------------------------------------------------

MANDEL = (-2.0, 1.0, -1.0, 1.0, 20)


def _mandel_make(pixels):
    height = max(8, int(round(math.sqrt(pixels * 2 / 3))))
    width = pixels // height
    return {"image": np.zeros((height, width), np.uint8), "ref": np.zeros((height, width), np.uint8)}


def _mandel_launch(m, s):
    h, w = s["image"].shape
    m.create_fractal[(blocks_for(w, 32), blocks_for(h, 32)), (32, 32)](*MANDEL[:4], s["image"], MANDEL[4])


def _mandel_numpy(s):
    min_x, max_x, min_y, max_y, iters = MANDEL
    h, w = s["ref"].shape
    real = min_x + np.arange(w) * ((max_x - min_x) / w)
    imag = min_y + np.arange(h) * ((max_y - min_y) / h)
    c = real[None, :] + 1j * imag[:, None]
    z = np.zeros_like(c)
    out = np.full(c.shape, 255, np.int64)
    active = np.ones(c.shape, bool)
    for i in range(iters):
        z[active] = z[active] * z[active] + c[active]
        escaped = active & (z.real * z.real + z.imag * z.imag >= 4)
        out[escaped] = 255 * i // iters
        active &= ~escaped
    s["ref"][...] = out


def _mandel_check(s):
    differ = np.count_nonzero(s["image"] != s["ref"])
    return None if differ <= s["image"].size // 1000 else f"{differ} pixels differ from NumPy's"


# --- histogram --------------------------------------------------------------

XMIN, XMAX, NBINS = np.float32(-4.0), np.float32(4.0), 64


def _hist_make(n):
    x = np.random.default_rng(1).normal(size=n).astype(np.float32)
    return {"n": n, "x": x, "hist": np.zeros(NBINS, np.int32), "ref": None}


def _hist_reset(s):
    s["hist"][...] = 0


def _grid_stride(n, threads=256, per_thread=16):
    """A grid-stride launch: enough blocks for `per_thread` elements a thread."""
    return max(1, blocks_for(n, threads * per_thread)), threads


def _hist_launch(kernel):
    def launch(m, s):
        blocks, threads = _grid_stride(s["n"])
        getattr(m, kernel)[blocks, threads](s["x"], XMIN, XMAX, s["hist"])
    return launch


def _hist_numpy(s):
    width = (np.float64(XMAX) - np.float64(XMIN)) / NBINS  # float32 / int64 is float64, as in the kernel
    bins = ((s["x"] - XMIN).astype(np.float64) / width).astype(np.int32)
    bins = bins[(bins >= 0) & (bins < NBINS)]
    s["ref"] = np.bincount(bins, minlength=NBINS).astype(np.int32)


def _hist_check(s):
    return None if np.array_equal(s["hist"], s["ref"]) else "counts differ from NumPy's"


# --- normalize --------------------------------------------------------------

NORM_COLUMNS = 32


def _norm_make(rows):
    rows = max(256, rows // 256 * 256)  # one thread per row, no bounds check: whole blocks
    base = np.random.default_rng(2).random((rows, NORM_COLUMNS), dtype=np.float32) + 0.5
    return {"base": base, "x": base.copy(), "ref": np.empty_like(base)}


def _norm_reset(s):
    np.copyto(s["x"], s["base"])


def _norm_launch(m, s):
    m.normalize[s["x"].shape[0] // 256, 256](s["x"])


def _norm_numpy(s):
    x = s["base"]
    np.divide(x, (x.sum(axis=1, dtype=np.float32) / np.float64(NORM_COLUMNS))[:, None], out=s["ref"], casting="unsafe")


# --- transpose --------------------------------------------------------------

def _tr_make(elements):
    size = max(32, int(math.sqrt(elements)) // 32 * 32)
    a = np.arange(size * size, dtype=np.int32).reshape(size, size)
    return {"a": a, "out": np.zeros_like(a), "ref": np.zeros_like(a)}


def _tr_launch(kernel):
    def launch(m, s):
        tiles = s["a"].shape[0] // 32
        getattr(m, kernel)[(tiles, tiles), (32, 8)](s["a"], s["out"])
    return launch


def _tr_numpy(s):
    np.copyto(s["ref"], s["a"].T)


# --- haversine --------------------------------------------------------------

TARGET = (40.7128, -74.0060)


def _hav_make(n):
    rng = np.random.default_rng(3)
    return {"n": n, "lat": rng.uniform(-90, 90, n), "lon": rng.uniform(-180, 180, n),
            "out": np.zeros(n), "ref": np.zeros(n)}


def _hav_launch(m, s):
    blocks, threads = _grid_stride(s["n"])
    m.haversine[blocks, threads](s["lat"], s["lon"], TARGET[0], TARGET[1], s["out"])


def _hav_numpy(s):
    k = math.pi / 180
    x1, y1 = k * s["lat"], k * s["lon"]
    x2, y2 = k * TARGET[0], k * TARGET[1]
    a = np.sin((x2 - x1) / 2) ** 2 + np.cos(x1) * np.cos(x2) * np.sin((y2 - y1) / 2) ** 2
    s["ref"][...] = 2 * np.arcsin(np.sqrt(a)) * 6371


# --- monte_carlo_pi ---------------------------------------------------------

MC_THREADS = 256


def _mc_layout(samples):
    """(threads, iterations): 1000 samples a thread, or one block of fewer."""
    if samples >= MC_THREADS * 1000:
        return samples // 1000 // MC_THREADS * MC_THREADS, 1000
    return MC_THREADS, max(1, samples // MC_THREADS)


def _mc_make(samples):
    threads, iterations = _mc_layout(samples)
    from numba.cuda.random import init_xoroshiro128p_states_cpu, xoroshiro128p_dtype

    states = np.empty(threads, dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states_cpu(states, 1, 0)
    return {"states": states, "base": states.copy(), "iterations": iterations, "threads": threads,
            "out": np.zeros(threads, np.float32), "ref": None}


def _mc_reset(s):
    np.copyto(s["states"], s["base"])


def _mc_launch(m, s):
    m.compute_pi[s["threads"] // MC_THREADS, MC_THREADS](s["states"], s["iterations"], s["out"])


def _mc_numpy(s):
    rng = np.random.default_rng(4)
    n = s["threads"] * s["iterations"]
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    s["ref"] = 4.0 * np.count_nonzero(x * x + y * y <= 1.0) / n


def _mc_check(s):
    estimate = float(s["out"].mean())
    return None if abs(estimate - math.pi) < 0.01 else f"estimate {estimate} is not pi"


# --- rounding ---------------------------------------------------------------

def _round_make(n):
    x = np.random.default_rng(5).random(n) * 100
    return {"n": n, "x": x, "out": np.zeros(n), "ref": np.zeros(n)}


def _round_launch(m, s):
    m.gpu_round[blocks_for(s["n"], 256), 256](s["x"], s["out"], 3)


def _round_numpy(s):
    np.round(s["x"], 3, out=s["ref"])


# --- ufuncs -----------------------------------------------------------------

def _ufunc_make(n, operands):
    rng = np.random.default_rng(6)
    arrays = [(rng.random(n, dtype=np.float32) + np.float32(0.5)) for _ in range(operands)]
    return {"n": n, "args": arrays, "out": None, "ref": None}


def _gauss_launch(m, s):
    s["out"] = m.gaussian_pdf(s["args"][0], np.float32(1.0), np.float32(0.5))


def _gauss_numpy(s):
    x = s["args"][0]
    s["ref"] = np.exp(-0.5 * ((x - np.float32(1.0)) / np.float32(0.5)) ** 2) / (np.float32(0.5) * np.float32((2 * math.pi) ** 0.5))


def _polar_launch(m, s):
    s["out"] = m.polar_distance(*s["args"])


def _polar_numpy(s):
    r1, t1, r2, t2 = s["args"]
    s["ref"] = np.sqrt((r1 * np.cos(t1) - r2 * np.cos(t2)) ** 2 + (r1 * np.sin(t1) - r2 * np.sin(t2)) ** 2)


def _rel_launch(m, s):
    s["out"] = m.rel_diff(*s["args"])


def _rel_numpy(s):
    x, y = s["args"]
    s["ref"] = 2 * (x - y) / (x + y)


# --- reductions -------------------------------------------------------------

def _red_make(n):
    return {"n": n, "x": np.random.default_rng(7).random(n), "out": None, "ref": None}


def _sum_launch(m, s):
    s["out"] = m.sum_reduce(s["x"], init=0.0)


def _max_launch(m, s):
    s["out"] = m.max_reduce(s["x"], init=0.0)


# --- atomics ----------------------------------------------------------------

def _atomic_make(n):
    return {"n": max(256, n // 256 * 256), "counter": np.zeros(1, np.int32), "ref": None}


def _atomic_reset(s):
    s["counter"][0] = 0


def _atomic_launch(m, s):
    m.thread_counter_safe[s["n"] // 256, 256](s["counter"])


def _atomic_check(s):
    return None if int(s["counter"][0]) == s["n"] else f"counter {int(s['counter'][0])}, not {s['n']}"


def _grid_text(n):
    blocks, threads = _grid_stride(n)
    return f"[{blocks}, {threads}], grid-stride"


M = 1 << 20
CASES = [
    Case("vector_add", "vector_add", "element", M, 8192, _vadd_make, _vadd_launch, _vadd_numpy,
         lambda s: _close(s["out"], s["ref"]), lambda n: f"[{blocks_for(n, 256)}, 256]"),
    Case("create_fractal", "mandelbrot", "pixel", 1536 * 1024, 96 * 64, _mandel_make, _mandel_launch, _mandel_numpy,
         _mandel_check, lambda n: "blocks of (32, 32), one thread a pixel, 20 iterations"),
    Case("cuda_histogram", "histogram", "sample", M, 8192, _hist_make, _hist_launch("cuda_histogram"), _hist_numpy,
         _hist_check, _grid_text, reset=_hist_reset),
    Case("cuda_histogram_shared", "histogram", "sample", M, 8192, _hist_make, _hist_launch("cuda_histogram_shared"),
         _hist_numpy, _hist_check, _grid_text, reset=_hist_reset),
    Case("normalize", "normalize", "element", M, 8192, lambda n: _norm_make(n // NORM_COLUMNS), _norm_launch,
         _norm_numpy, lambda s: _close(s["x"], s["ref"], rtol=1e-5), lambda n: f"[{max(256, n // NORM_COLUMNS // 256 * 256) // 256}, 256], one thread a row of {NORM_COLUMNS}",
         reset=_norm_reset),
    Case("transpose", "transpose", "element", M, 64 * 64, _tr_make, _tr_launch("transpose"), _tr_numpy,
         lambda s: None if np.array_equal(s["out"], s["ref"]) else "result differs", lambda n: "tiles of 32, blocks of (32, 8)"),
    Case("tile_transpose", "transpose", "element", M, 64 * 64, _tr_make, _tr_launch("tile_transpose"), _tr_numpy,
         lambda s: None if np.array_equal(s["out"], s["ref"]) else "result differs", lambda n: "tiles of 32, blocks of (32, 8)"),
    Case("haversine (float64)", "haversine", "element", M, 8192, _hav_make, _hav_launch, _hav_numpy,
         lambda s: _close(s["out"], s["ref"], rtol=1e-9, atol=1e-6), _grid_text),
    Case("compute_pi", "monte_carlo_pi", "sample", 16 * 1000 * 1024, 256 * 20, _mc_make, _mc_launch, _mc_numpy,
         _mc_check, lambda n: f"[{_mc_layout(n)[0] // MC_THREADS}, {MC_THREADS}], {_mc_layout(n)[1]} samples a thread",
         reset=_mc_reset),
    Case("gpu_round", "rounding", "element", M, 8192, _round_make, _round_launch, _round_numpy,
         lambda s: _close(s["out"], s["ref"], rtol=0, atol=1e-12), lambda n: f"[{blocks_for(n, 256)}, 256]"),
    Case("gaussian_pdf (ufunc)", "ufuncs", "element", M, 8192, lambda n: _ufunc_make(n, 1), _gauss_launch, _gauss_numpy,
         lambda s: _close(s["out"], s["ref"], rtol=1e-5), lambda n: "ufunc call"),
    Case("polar_distance (ufunc)", "ufuncs", "element", M, 8192, lambda n: _ufunc_make(n, 4), _polar_launch,
         _polar_numpy, lambda s: _close(s["out"], s["ref"], rtol=1e-4, atol=1e-6), lambda n: "ufunc call"),
    Case("rel_diff (ufunc)", "ufuncs", "element", M, 8192, lambda n: _ufunc_make(n, 2), _rel_launch, _rel_numpy,
         lambda s: _close(s["out"], s["ref"], rtol=1e-5, atol=1e-6), lambda n: "ufunc call"),
    Case("sum_reduce (float64)", "reductions", "element", M, 8192, _red_make, _sum_launch,
         lambda s: s.__setitem__("ref", s["x"].sum()), lambda s: _close(s["out"], s["ref"], rtol=1e-9),
         lambda n: "reduction call"),
    Case("max_reduce (float64)", "reductions", "element", M, 8192, _red_make, _max_launch,
         lambda s: s.__setitem__("ref", s["x"].max()), lambda s: _close(s["out"], s["ref"]),
         lambda n: "reduction call"),
    Case("thread_counter_safe", "atomics", "thread", 1 << 18, 4096, _atomic_make, _atomic_launch, None,
         _atomic_check, lambda n: f"[{n // 256}, 256], one atomic add a thread"),
]


def size_of(case, scale, sim):
    return max(1, int((case.sim if sim else case.full) * scale))


def _time(function, reset, state, repeats):
    times = []
    for _ in range(repeats):
        if reset:
            reset(state)
        start = time.perf_counter()
        function(state)
        times.append(time.perf_counter() - start)
    return times


def _load_kiln(example, cache):
    """Builds the example with `kiln build --module` (the kiln in $KILN, with
    the flags in $KILN_BENCH_BUILD_FLAGS) into $KILN_BENCH_MODULES and
    imports it: the runtime's CPU engine path."""
    if example not in cache:
        folder = os.environ["KILN_BENCH_MODULES"]
        flags = os.environ.get("KILN_BENCH_BUILD_FLAGS", "").split()
        start = time.perf_counter()
        subprocess.run([os.environ["KILN"], "build", str(ROOT / "examples" / f"{example}.py"), "--module", example,
                        "-o", folder, "--python", sys.executable, *flags], check=True, capture_output=True)
        built = time.perf_counter() - start
        if folder not in sys.path:
            sys.path.insert(0, folder)
        cache[example] = importlib.import_module(example)
        cache[example]._bench_compile_s = built
    return cache[example]


def _load_sim(example, cache):
    if example not in cache:
        path = ROOT / "examples" / f"{example}.py"
        name = f"kiln_bench_sim_{example}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        cache[example] = module
    return cache[example]


def run(engine, scale, repeats, only):
    modules = {}
    for case in CASES:
        if only and case.name.split(" ")[0] not in only and case.example not in only:
            continue
        sim = engine == "sim"
        n = size_of(case, scale, sim)
        state = case.make(n)
        result = {"case": case.name, "example": case.example, "unit": case.unit, "size": n,
                  "config": case.config(n)}
        if sim:
            try:
                module = _load_sim(case.example, modules)
                result["sim_times"] = _time(lambda s: case.launch(module, s), case.reset, state, repeats)
            except Exception as error:  # noqa: BLE001 - the simulator cannot run it: say why
                result["sim_error"] = f"{type(error).__name__}: {error}"
        else:
            module = _load_kiln(case.example, modules)
            result["compile_s"] = module._bench_compile_s
            if case.reset:
                case.reset(state)
            case.launch(module, state)  # warm-up, and the result that is checked
            if case.numpy:
                case.numpy(state)
            result["check"] = case.check(state) or "ok"
            result["kiln_times"] = _time(lambda s: case.launch(module, s), case.reset, state, repeats)
            if case.numpy:
                result["numpy_times"] = _time(case.numpy, None, state, repeats)
        print(json.dumps(result), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engine", choices=["kiln", "sim"])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", help="comma-separated case or example names")
    options = parser.parse_args()
    if (options.engine == "sim") != SIM:
        raise SystemExit("run `sim` with NUMBA_ENABLE_CUDASIM=1, and `kiln` without it")
    sys.dont_write_bytecode = True
    warnings.simplefilter("ignore")  # uint64 wraparound in the simulated RNG; object-mode fallbacks
    run(options.engine, options.scale, options.repeats, set(options.only.split(",")) if options.only else None)


if __name__ == "__main__":
    main()
