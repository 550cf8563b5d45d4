"""What a build records of its sources' paths: relative to the project root
(the nearest pyproject.toml's folder, else the folder above the module's
top-level package, else what --project-root says), then as
--file-prefix-map renames them, and what a kernel raises at run time names
that path and the right line.
"""

import json
import os
import subprocess
import sys

import pytest

from repro_builds import (BUILD_DIR, EXT_SUFFIX, HELPERS, KERNELS, Circumstances,
                          assert_same_build, build, kiln_binary, line_of, write_checkout)

RUN_KERNELS = """
import numpy as np
from rp import k_basic
src = np.arange(4, dtype=np.float32)
out = np.zeros(4, dtype=np.float32)
messages = {}
for kernel in (k_basic.gather, k_basic.gather_helped):
    try:
        kernel[1, 4](src, 3, out)
    except IndexError as error:
        messages[kernel.__name__] = str(error)
print(json.dumps(messages))
"""


def run_time_messages(module_folder):
    """The IndexError of each kernel of the built module at `module_folder`
    (a folder holding rp/), raised on the CPU engine."""
    (module_folder / "rp" / "__init__.py").write_text("")
    env = dict(os.environ, KILN_TARGET="cpu",
               PYTHONPATH=os.pathsep.join([str(module_folder), str(BUILD_DIR / "python")]))
    result = subprocess.run([sys.executable, "-c", "import json\n" + RUN_KERNELS],
                            cwd=module_folder, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def typed_ir_paths(checkout, out, *flags, package="rp", cwd=None):
    """The paths the typed IR of a build records, by function."""
    module = checkout / package.replace(".", "/") / "k_basic.py"
    result = subprocess.run([kiln_binary(), "build", module, "--module", f"{package}.k_basic",
                             "--emit", "typed", "-o", out, "-q", "--no-cache", *flags],
                            cwd=cwd or out.parent, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    text = (out / f"{package}.k_basic.typed").read_text()
    return sorted({part.split("'")[1] for part in text.split(" path(")[1:]})


def test_run_time_messages_name_the_file_relative_to_the_project_and_the_right_line(tmp_path):
    checkout = write_checkout(tmp_path / "somewhere" / "checkout")
    module_folder = tmp_path / "built"
    (module_folder / "rp").mkdir(parents=True)
    result = subprocess.run(
        [kiln_binary(), "build", checkout / "rp" / "k_basic.py", "--module", "rp.k_basic",
         "-o", module_folder / "rp", "--ext-suffix", EXT_SUFFIX, "-q", "--no-cache"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    messages = run_time_messages(module_folder)
    kernel_line = line_of(KERNELS, "the kernel's IndexError")
    helper_line = line_of(HELPERS, "helpers' IndexError")
    assert f"at rp/k_basic.py:{kernel_line})" in messages["gather"], messages["gather"]
    assert f"at rp/helpers.py:{helper_line})" in messages["gather_helped"], (
        messages["gather_helped"])
    for message in messages.values():
        assert str(tmp_path) not in message, f"the message names the checkout's folder: {message}"


def test_the_folder_of_the_nearest_pyproject_is_the_root(tmp_path):
    for name in ("one", "two"):
        checkout = write_checkout(tmp_path / name, prefix="src")
        (checkout / "pyproject.toml").write_text('[project]\nname = "rp"\nversion = "1"\n')
    assert typed_ir_paths(tmp_path / "one" / "src", tmp_path / "typed") == [
        "src/rp/helpers.py", "src/rp/k_basic.py"]
    reference = build(tmp_path / "one" / "src", tmp_path / "out-one")
    variation = build(tmp_path / "two" / "src", tmp_path / "out-two")
    assert_same_build(reference, variation, "another checkout of a project with a pyproject.toml")


def test_without_a_pyproject_the_folder_above_the_top_level_package_is_the_root(tmp_path):
    checkout = write_checkout(tmp_path / "checkout", prefix="acme")
    (checkout / "acme" / "__init__.py").write_text("")
    assert typed_ir_paths(checkout, tmp_path / "typed", package="acme.rp") == [
        "acme/rp/helpers.py", "acme/rp/k_basic.py"]


def test_project_root_wins_where_it_holds_the_module(tmp_path):
    checkout = write_checkout(tmp_path / "checkout", prefix="python")
    (checkout / "pyproject.toml").write_text('[project]\nname = "rp"\nversion = "1"\n')
    (checkout / "python" / "pyproject.toml").write_text('[project]\nname = "rp"\nversion = "1"\n')
    module_root = checkout / "python"
    assert typed_ir_paths(module_root, tmp_path / "typed") == ["rp/helpers.py", "rp/k_basic.py"]
    assert typed_ir_paths(module_root, tmp_path / "typed", "--project-root", checkout) == [
        "python/rp/helpers.py", "python/rp/k_basic.py"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert typed_ir_paths(module_root, tmp_path / "typed", "--project-root", elsewhere) == [
        "rp/helpers.py", "rp/k_basic.py"], "a root that does not hold the module is passed over"


def test_file_prefix_map_renames_paths_and_the_last_that_matches_wins(tmp_path):
    checkout = write_checkout(tmp_path / "checkout")
    typed = tmp_path / "typed"
    assert typed_ir_paths(checkout, typed, f"--file-prefix-map={checkout}=/src") == [
        "/src/rp/helpers.py", "/src/rp/k_basic.py"]
    both = ["--file-prefix-map", f"{checkout}/rp=/long", "--file-prefix-map", f"{checkout}=/short"]
    assert typed_ir_paths(checkout, typed, *both) == [
        "/short/rp/helpers.py", "/short/rp/k_basic.py"], "GCC's rule: the last that matches wins"
    assert typed_ir_paths(checkout, typed, *both[2:], *both[:2]) == [
        "/long/helpers.py", "/long/k_basic.py"]
    assert typed_ir_paths(checkout, typed, "--file-prefix-map", "rp/=lib/", cwd=checkout) == [
        "lib/helpers.py", "lib/k_basic.py"], "a relative OLD is taken from the current folder"


def test_two_checkouts_mapped_to_one_name_build_the_same_module(tmp_path):
    checkouts = [write_checkout(tmp_path / name) for name in ("one", "two")]
    built = [build(checkout, tmp_path / f"out-{number}",
                   Circumstances(flags=("--lineinfo", f"--file-prefix-map={checkout}=/src")))
             for number, checkout in enumerate(checkouts)]
    assert_same_build(built[0], built[1], "another checkout mapped to /src")


@pytest.mark.parametrize("entry", ["no-equals-sign", ""])
def test_a_file_prefix_map_without_an_equals_sign_is_a_usage_error(tmp_path, entry):
    checkout = write_checkout(tmp_path / "checkout")
    result = subprocess.run([kiln_binary(), "build", checkout / "rp" / "k_basic.py", "--emit",
                             "typed", "-o", tmp_path, "--file-prefix-map", entry],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"kiln: error: --file-prefix-map: '{entry}' is no OLD=NEW"), (
        result.stderr)
