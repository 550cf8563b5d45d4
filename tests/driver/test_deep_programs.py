"""Programs nested deeper than the front end allows get a diagnostic naming
the file and line, as Numba raises RecursionError; never a crash. What
CPython compiles (a flat chain of 2,989 terms) is not "too deep"."""

import pytest

DEVICE_CHAIN_LIMIT = 1000


def device_chain(length):
    """A kernel calling f{length-1}, which calls f{length-2}, ... f0."""
    lines = ["from numba import cuda, float32, void", "", "",
             "@cuda.jit(device=True)", "def f0(x):", "    return x + 1", ""]
    for i in range(1, length):
        lines += ["@cuda.jit(device=True)", f"def f{i}(x):", f"    return f{i - 1}(x) + 1", ""]
    lines += ["@cuda.jit(void(float32[::1]))", "def kernel(a):",
              f"    a[0] = f{length - 1}(a[0])", ""]
    return "\n".join(lines)


def kernel_returning(expression):
    return ("from numba import cuda, float32, void\n\n\n"
            "@cuda.jit(void(float32[::1]))\n"
            "def kernel(a):\n"
            "    x = a[0]\n"
            f"    a[0] = {expression}\n")


def check(kiln, tmp_path, source):
    path = tmp_path / "deep.py"
    path.write_text(source)
    result = kiln("check", path)
    assert result.returncode >= 0, f"kiln check crashed (signal {-result.returncode}):\n{result.stderr[-2000:]}"
    return path, result


def test_a_device_call_chain_at_the_limit_checks(kiln, tmp_path):
    _, result = check(kiln, tmp_path, device_chain(DEVICE_CHAIN_LIMIT))
    assert result.returncode == 0, f"a chain of {DEVICE_CHAIN_LIMIT} calls should check:\n{result.stderr[-2000:]}"


@pytest.mark.parametrize("length", [DEVICE_CHAIN_LIMIT + 1, 2000, 5000])
def test_a_device_call_chain_past_the_limit_is_a_diagnostic(kiln, tmp_path, length):
    path, result = check(kiln, tmp_path, device_chain(length))
    assert result.returncode == 1, result.stderr[-2000:]
    # f{length-1001} is the call the limit stops, in the body of f{length-1000}.
    line = 7 + 4 * (length - DEVICE_CHAIN_LIMIT - 1) + 3
    assert (f"{path}:{line}:" in result.stderr
            and f"device functions call each other more than {DEVICE_CHAIN_LIMIT} deep"
            in result.stderr), f"the diagnostic should name line {line}:\n{result.stderr[:3000]}"
    # The call chain in the notes is shortened, not a thousand lines.
    assert len(result.stderr.splitlines()) < 100, "the diagnostic's notes list the whole chain"


@pytest.mark.parametrize("terms", [999, 2989])
def test_a_flat_chain_cpython_compiles_checks(kiln, tmp_path, terms):
    _, result = check(kiln, tmp_path, kernel_returning(" + ".join(["x"] * terms)))
    assert result.returncode == 0, f"{terms} terms of x + x + ... should check:\n{result.stderr[-2000:]}"


@pytest.mark.parametrize("expression", [
    " + ".join(["x"] * 5000),       # a left-associative chain CPython rejects too
    " ** ".join(["x"] * 100000),    # right-associative: each ** nests the next
    "-" * 100000 + "x",             # unary operators
    "x" + "[0]" * 5000,             # trailers
])
def test_too_deep_an_expression_is_a_diagnostic(kiln, tmp_path, expression):
    path, result = check(kiln, tmp_path, kernel_returning(expression))
    assert result.returncode == 1, result.stderr[-2000:]
    assert f"{path}:7:" in result.stderr and "nested too deeply" in result.stderr, (
        f"the diagnostic should name line 7:\n{result.stderr[-2000:]}")


def test_too_many_nested_blocks_is_a_diagnostic(kiln, tmp_path):
    body = "".join("    " * (i + 1) + "if x > 0:\n" for i in range(150))
    source = kernel_returning("x").replace("    a[0] = x\n", body + "    " * 151 + "a[0] = x\n")
    path, result = check(kiln, tmp_path, source)
    assert result.returncode == 1, result.stderr[-2000:]
    assert "too many levels of indentation" in result.stderr and f"{path}:" in result.stderr, (
        result.stderr[-2000:])
