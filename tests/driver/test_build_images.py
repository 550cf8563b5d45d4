"""`kiln build --emit fatbin`: the specializations a GPU loads at once share
an image, one fat binary built from their LLVM IR linked into one PTX module
per target; linking changes no specialization's code."""

import json

FATBIN_MAGIC = bytes.fromhex("50ed55ba")

OPTIONS = """\
from numba import cuda, float32, void


@cuda.jit(void(float32[::1]))
def plain(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = out[i] * 2


@cuda.jit(void(float32[::1]), fastmath=True)
def fast(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = out[i] / 3


@cuda.jit(["void(float32[::1])", "void(float64[::1])"])
def also_plain(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = out[i] + 1
"""

DEBUG = """\
from numba import cuda, float32, void


@cuda.jit(void(float32[::1]), debug=True, opt=False)
def first(out):
    out[cuda.grid(1)] = 1


@cuda.jit(void(float32[::1]), debug=True, opt=False)
def second(out):
    out[cuda.grid(1)] = 2
"""


def build(kiln, source, tmp_path, *flags, name="kernels"):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    out = tmp_path / "out"
    result = kiln("build", path, "--emit", "fatbin", "-o", out, "--no-cache", *flags)
    assert result.returncode == 0, result.stderr
    manifest = json.loads((out / f"{name}.manifest.json").read_text())
    return out, {spec["symbol"]: spec for spec in manifest["specializations"]}


def test_specializations_with_the_same_options_share_one_fat_binary(kiln, tmp_path):
    out, specs = build(kiln, OPTIONS, tmp_path, "--arch", "80")
    files = {symbol: spec["files"] for symbol, spec in specs.items()}
    assert files == {"kernels.plain$0": ["kernels.fatbin"],
                     "kernels.fast$0": ["kernels.1.fatbin"],
                     "kernels.also_plain$0": ["kernels.fatbin"],
                     "kernels.also_plain$1": ["kernels.fatbin"]}, files
    shared = (out / "kernels.fatbin").read_bytes()
    alone = (out / "kernels.1.fatbin").read_bytes()
    assert shared[:4] == alone[:4] == FATBIN_MAGIC
    # Each image's PTX (kept in its fat binary) defines its kernels' entries
    # and no other image's.
    for symbol, spec in specs.items():
        entry = f".entry {spec['entry']}(".encode()
        inside, outside = (alone, shared) if "fast" in symbol else (shared, alone)
        assert entry in inside and entry not in outside, f"{symbol} is in the wrong image"


def test_linking_changes_no_kernels_resources(kiln, repo_root, tmp_path):
    # Every example's kernels (libdevice helpers of the same names among
    # them), linked into one image, use the registers, stack and shared
    # memory they use when each is assembled alone.
    def resources(example, emit):
        result = kiln("build", example, "--emit", emit, "-o", tmp_path / example.stem / emit,
                      "--arch", "75;90", "--no-cache", "--json")
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        return {(k["name"], tuple(k["args"])): k["resources"] for k in report["kernels"]}

    examples = sorted((repo_root / "examples").glob("*.py"))
    assert len(examples) >= 10
    for example in examples:
        linked, alone = resources(example, "fatbin"), resources(example, "cubin")
        assert linked and all(linked.values()), (example.name, linked)
        assert linked == alone, f"{example.name}: linked {linked}, alone {alone}"


def test_fat_binaries_are_the_same_bytes_whatever_the_jobs(kiln, tmp_path):
    outputs = []
    for jobs in ("1", "2"):
        folder = tmp_path / jobs
        folder.mkdir()
        out, _ = build(kiln, OPTIONS, folder, "--arch", "75;90", "-j", jobs)
        outputs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert outputs[0] == outputs[1]


def test_kernels_with_debug_information_have_images_of_their_own(kiln, tmp_path):
    # ptxas refuses the debug information of two compile units in one module.
    out, specs = build(kiln, DEBUG, tmp_path, "--arch", "80")
    assert sorted(spec["files"][0] for spec in specs.values()) == [
        "kernels.1.fatbin", "kernels.fatbin"]
    assert all((out / spec["files"][0]).read_bytes()[:4] == FATBIN_MAGIC
               for spec in specs.values())
