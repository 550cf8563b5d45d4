"""Edits that move lines but change no kernel recompile nothing: compiled
code names the operations its messages are about by number, and each build
writes their "file:line" into the manifest from the source as it is then, so
messages name the moved lines."""

import json
import os
import subprocess
import sys

import pytest

MODULE = """\
from numba import cuda, float32, int32, void

from .helpers import shifted


@cuda.jit(void(float32[::1], int32))
def store(a, n):
    i = cuda.grid(1)
    a[i + n] = 1.0


@cuda.jit(void(float32[::1], int32))
def load(a, n):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = shifted(a, i, n)
"""

HELPERS = """\
from numba import cuda


@cuda.jit(device=True)
def shifted(a, i, n):
    return a[i + n] * 2.0
"""

# Launches `kernel` of pkg.kernels with an index past the end, on the CPU
# engine, and prints the IndexError's message.
RUN = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import pkg.kernels
try:
    getattr(pkg.kernels, sys.argv[2])[1, 4](np.zeros(4, np.float32), 2)
except IndexError as error:
    print(error)
"""


@pytest.fixture
def project(tmp_path):
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text(MODULE)
    (package / "helpers.py").write_text(HELPERS)
    return tmp_path


def build(kiln, project):
    result = kiln("build", project / "src" / "pkg" / "kernels.py", "--module", "pkg.kernels", "-o",
                  project / "out" / "pkg", "--arch", "80", "-j", "1", "--json", "--python", sys.executable,
                  env=dict(os.environ, KILN_CACHE_DIR=str(project / "cache")))
    assert result.returncode == 0, result.stderr
    (project / "out" / "pkg" / "__init__.py").write_text("")
    report = json.loads(result.stdout)
    return [(kernel["name"], step["step"], step["cache"]) for kernel in report["kernels"]
            for step in kernel["steps"]]


def message(project, kernel):
    done = subprocess.run([sys.executable, "-c", RUN, str(project / "out"), kernel], capture_output=True,
                          text=True, env=dict(os.environ, KILN_TARGET="cpu"))
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def extension_objects(kiln, project):
    """The keys of the extension objects (PyInit_ and the entry table) the
    cache holds."""
    listed = kiln("cache", "list", "--json", "--cache-dir", project / "cache")
    assert listed.returncode == 0, listed.stderr
    return [entry["key"] for entry in json.loads(listed.stdout) if entry["kind"] == "extension"]


def insert_lines(path, before_line, count):
    lines = path.read_text().splitlines(keepends=True)
    lines[before_line - 1:before_line - 1] = ["# moved\n"] * count
    path.write_text("".join(lines))


def test_moving_lines_recompiles_no_kernel_and_messages_name_the_new_lines(kiln, project):
    cold = build(kiln, project)
    assert {state for _, _, state in cold} == {"miss"}, cold
    assert message(project, "store").endswith("kernels.py:9)")
    assert message(project, "load").endswith("helpers.py:6)")

    insert_lines(project / "src" / "pkg" / "kernels.py", 1, 3)
    insert_lines(project / "src" / "pkg" / "helpers.py", 4, 2)
    warm = build(kiln, project)
    recompiled = [step for step in warm if step[2] != "hit"]
    assert not recompiled, f"moving lines recompiled {recompiled}"
    assert len(extension_objects(kiln, project)) == 1, \
        "moving lines made the module's extension object again"
    verbose = kiln("build", project / "src" / "pkg" / "kernels.py", "--module", "pkg.kernels", "-o",
                   project / "out" / "pkg", "--arch", "80", "-v", "--python", sys.executable,
                   env=dict(os.environ, KILN_CACHE_DIR=str(project / "cache")))
    assert "local hit  extension " in verbose.stderr, \
        f"a warm build did not take the module's extension object from the cache:\n{verbose.stderr}"
    assert message(project, "store").endswith("kernels.py:12)")
    assert message(project, "load").endswith("helpers.py:8)")


def test_an_edit_inside_a_kernel_recompiles_that_kernel_only(kiln, project):
    build(kiln, project)
    made = extension_objects(kiln, project)
    assert len(made) == 1, made
    kernels = project / "src" / "pkg" / "kernels.py"
    kernels.write_text(kernels.read_text().replace("a[i + n] = 1.0", "a[i + n] = 2.0"))
    recompiled = {name for name, _, state in build(kiln, project) if state != "hit"}
    assert recompiled == {"store"}
    assert extension_objects(kiln, project) == made, \
        "an edited body made the module's extension object (its name and entries unchanged) again"
    # The reused object describes the new bundle: the module imports and runs.
    assert message(project, "store").endswith("kernels.py:9)")


def test_a_new_kernel_makes_a_new_extension_object(kiln, project):
    build(kiln, project)
    kernels = project / "src" / "pkg" / "kernels.py"
    kernels.write_text(kernels.read_text() + """

@cuda.jit(void(float32[::1], int32))
def third(a, n):
    a[0] = n
""")
    build(kiln, project)
    assert len(extension_objects(kiln, project)) == 2
    done = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import numpy as np; "
                           "import pkg.kernels as k; a = np.zeros(4, np.float32); k.third[1, 1](a, 7); print(a[0])",
                           str(project / "out")], capture_output=True, text=True,
                          env=dict(os.environ, KILN_TARGET="cpu"))
    assert done.returncode == 0 and done.stdout.strip() == "7.0", done.stderr


def many_kernels(count, changed=None):
    lines = ["from numba import cuda, float32, void", ""]
    for k in range(count):
        scale = f"{k + 1}.5" if k == changed else f"{k + 1}.0"
        lines += ["", "@cuda.jit(void(float32[::1]))", f"def kernel{k}(a):", "    i = cuda.grid(1)",
                  "    if i < a.size:", f"        a[i] = a[i] * {scale}", ""]
    return "\n".join(lines)


def test_an_edited_kernel_of_a_large_module_relinks_its_image_only(kiln, tmp_path):
    source = tmp_path / "many.py"

    def build():
        result = kiln("build", source, "--module", "many", "-o", tmp_path / "out", "--arch", "80", "-j", "2",
                      "--json", "--python", sys.executable, env=dict(os.environ, KILN_CACHE_DIR=str(tmp_path / "c")))
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    source.write_text(many_kernels(150))
    images = build()["images"]
    assert len(images) >= 2, "150 kernels were linked into one image"
    assert sorted(k for image in images for k in image["kernels"]) == list(range(150))
    source.write_text(many_kernels(150, changed=77))
    rebuilt = [image for image in build()["images"]
               if any(step["cache"] != "hit" for step in image["steps"])]
    assert len(rebuilt) == 1 and 77 in rebuilt[0]["kernels"], rebuilt
