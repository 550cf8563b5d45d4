"""`kiln build --json`: the files written and, per specialization, each
step's cache outcome and time and each cubin's resources; a failed build
says why, in the same one JSON object on stdout."""

import json

KERNELS = """\
from numba import cuda, float32


@cuda.jit("void(float32[::1], float32[::1])")
def scale(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 2 * x[i]


@cuda.jit("void(float32[::1])")
def reverse_block(a):
    tile = cuda.shared.array(128, float32)
    i = cuda.threadIdx.x
    tile[i] = a[i]
    cuda.syncthreads()
    a[i] = tile[127 - i]
"""


def build_json(kiln, tmp_path, *flags):
    result = kiln("build", tmp_path / "kernels.py", "--module", "kernels", "-o", tmp_path / "out",
                  "--arch", "75;90", "--ext-suffix", ".so", "--json", *flags)
    report = json.loads(result.stdout)  # stdout holds the one object, nothing else
    return result, report


def test_steps_say_miss_then_hit_and_cubins_report_their_resources(kiln, tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS)
    cache = ["--cache-dir", tmp_path / "cache"]
    result, first = build_json(kiln, tmp_path, *cache)
    assert result.returncode == 0 and first["ok"], result.stderr
    assert first["written"] == [str(tmp_path / "out" / "kernels.so")]
    assert [k["name"] for k in first["kernels"]] == ["scale", "reverse_block"]
    steps = [(s["step"], s["target"]) for s in first["kernels"][0]["steps"]]
    assert steps[1:] == [("llvm", "sm_75"), ("llvm", "sm_90")], steps
    assert steps[0][0] == "host"
    # Both kernels are in one image: the module's fat binary.
    [image] = first["images"]
    assert image["name"] == "kernels" and image["kernels"] == [0, 1], image
    assert [k["image"] for k in first["kernels"]] == [0, 0]
    assert [(s["step"], s["target"]) for s in image["steps"]] == [
        ("ptx", "sm_75"), ("ptx", "sm_90"), ("cubin", "sm_75"), ("cubin", "sm_90"),
        ("fatbin", "-")], image["steps"]
    for item in first["kernels"] + first["images"]:
        assert {s["cache"] for s in item["steps"]} == {"miss"}, item["steps"]
        assert all(isinstance(s["microseconds"], int) for s in item["steps"])
    for kernel in first["kernels"]:
        assert sorted(kernel["resources"]) == ["sm_75", "sm_90"]
    shared = first["kernels"][1]["resources"]["sm_90"]
    assert shared["shared"] == 512 and shared["registers"] > 0, shared
    assert first["kernels"][0]["args"] == ["array(float32, 1d, C)", "array(float32, 1d, C)"]

    result, second = build_json(kiln, tmp_path, *cache)
    assert result.returncode == 0, result.stderr
    for item in second["kernels"] + second["images"]:
        assert {s["cache"] for s in item["steps"]} == {"hit"}, item["steps"]
    assert second["kernels"][1]["resources"] == first["kernels"][1]["resources"], (
        "resources read back from the cache differ from those ptxas reported")

    result, uncached = build_json(kiln, tmp_path, "--no-cache")
    assert {s["cache"] for k in uncached["kernels"] + uncached["images"] for s in k["steps"]} == {
        "uncached"}


def test_a_failed_build_reports_its_diagnostics_and_exits_1(kiln, tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS.replace("2 * x[i]", "2 * y[i]"))
    result, report = build_json(kiln, tmp_path, "--no-cache")
    assert result.returncode == 1
    assert report["ok"] is False and report["written"] == [] and report["kernels"] == []
    (diagnostic,) = report["diagnostics"]
    assert diagnostic["severity"] == "error" and diagnostic["line"] == 8, diagnostic
    assert "'y' is not defined" in diagnostic["message"]


def test_a_tool_error_is_in_errors(kiln, tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS)
    result, report = build_json(kiln, tmp_path, "--no-cache", "-Xptxas", "--no-such-flag")
    assert result.returncode == 1 and report["ok"] is False
    assert any("ptxas failed" in error and "no-such-flag" in error for error in report["errors"]), (
        report["errors"])
