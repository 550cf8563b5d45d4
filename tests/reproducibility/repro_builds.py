"""Builds of one small project under what reprotest varies, for the
reproducibility tests (docs/cli.md, "Where a project sits").

The project is a package, `rp`, whose kernel module imports a device
function from a sibling module, and whose kernels raise IndexError on the
CPU engine, so that messages naming a file and a line are compiled into the
module. A checkout is a copy of it in a folder of its own; `build()` runs
`kiln build` on a checkout under one set of circumstances and returns the
bytes of everything the build wrote: the module (`--module`), and the fat
binaries and manifest of the same build as separate files (`--emit fatbin`).
"""

import dataclasses
import os
import pathlib
import re
import shutil
import subprocess
import sysconfig

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD_DIR = pathlib.Path(os.environ.get("KILN_BUILD_DIR", REPO_ROOT / "build"))
EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")
NOBODY = 65534
# Printable runs in a binary, for saying what differs.
TEXT = re.compile(rb"[\x20-\x7e]{6,}")

HELPERS = '''\
from numba import cuda


@cuda.jit(device=True)
def pick(values, index):
    return values[index]  # helpers' IndexError


@cuda.jit(device=True)
def scaled(x):
    return x * 2
'''

KERNELS = '''\
from numba import cuda, float32, int64, void

from .helpers import pick, scaled


@cuda.jit(void(float32[::1], int64, float32[::1]))
def gather(src, offset, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = scaled(src[i + offset])  # the kernel's IndexError


@cuda.jit(void(float32[::1], int64, float32[::1]))
def gather_helped(src, offset, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = scaled(pick(src, i + offset))
'''

SOURCES = {"rp/__init__.py": "", "rp/helpers.py": HELPERS, "rp/k_basic.py": KERNELS}


def line_of(source, marker):
    """The 1-based line of `source` holding `marker`."""
    for number, line in enumerate(source.splitlines(), 1):
        if marker in line:
            return number
    raise AssertionError(f"{marker!r} is not in the source")


def write_checkout(folder, prefix=""):
    """The project, its package under `folder/prefix`."""
    for name, text in SOURCES.items():
        path = folder / prefix / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


@dataclasses.dataclass
class Circumstances:
    """What one build runs under; the defaults are the reference build's."""
    env: dict = dataclasses.field(default_factory=dict)
    umask: int = 0o022
    jobs: int = 2
    as_nobody: bool = False
    # The module's path as given: absolute, or relative to the checkout,
    # the current folder then.
    relative: bool = False
    flags: tuple = ()


def base_env(home):
    """A small environment: what kiln needs to find the CUDA toolkit, a
    home of its own, UTC and a UTF-8 locale (variations change them)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TZ": "UTC",
           "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        if variable in os.environ:
            env[variable] = os.environ[variable]
    return env


def kiln_binary():
    binary = os.environ.get("KILN", str(BUILD_DIR / "driver" / "kiln"))
    if not os.access(binary, os.X_OK):
        pytest.fail(f"kiln is not built at {binary}; run scripts/setup.sh")
    return binary


def read_tree(folder):
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def build(checkout, out, circumstances=None, package="rp"):
    """Builds `package`.k_basic of `checkout` into `out` (emptied first) as
    a module and as separate files, and returns {name: bytes} of all."""
    circumstances = circumstances or Circumstances()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    module = checkout / package.replace(".", "/") / "k_basic.py"
    source = os.path.relpath(module, checkout) if circumstances.relative else str(module)
    env = base_env(out)
    env.update(circumstances.env)
    prefix = []
    if circumstances.as_nobody:
        prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        os.chown(out, NOBODY, NOBODY)
    for form, extra in (("module", ["--ext-suffix", EXT_SUFFIX]), ("files", ["--emit", "fatbin"])):
        folder = out / form
        command = [*prefix, kiln_binary(), "build", source, "--module", f"{package}.k_basic",
                   "-o", str(folder), "--no-cache", "-j", str(circumstances.jobs), "-q",
                   *extra, *circumstances.flags]
        result = subprocess.run(command, cwd=checkout if circumstances.relative else out, env=env,
                                capture_output=True, text=True, timeout=300,
                                preexec_fn=lambda: os.umask(circumstances.umask))
        assert result.returncode == 0, (
            f"{' '.join(command)} exited {result.returncode}:\n{result.stderr}")
    return read_tree(out)


def assert_same_build(reference, other, what):
    """Every file of two builds byte for byte; else which differ, where,
    and the bytes around the first difference."""
    assert reference, "the reference build wrote nothing"
    differing = sorted(name for name in reference.keys() | other.keys()
                       if reference.get(name) != other.get(name))
    if not differing:
        return
    report = []
    for name in differing:
        left, right = reference.get(name), other.get(name)
        if left is None or right is None:
            report.append(f"  {name}: only in {'the variation' if left is None else 'the reference'}")
            continue
        at = next((i for i, (a, b) in enumerate(zip(left, right)) if a != b),
                  min(len(left), len(right)))
        report.append(f"  {name}: first difference at byte {at} of {len(left)}/{len(right)}:\n"
                      f"    reference {left[max(0, at - 40):at + 40]!r}\n"
                      f"    variation {right[max(0, at - 40):at + 40]!r}")
        # Text only one side holds, which is where a path or a time shows.
        left_text, right_text = set(TEXT.findall(left)), set(TEXT.findall(right))
        for side, only in (("reference", left_text - right_text),
                           ("variation", right_text - left_text)):
            if only:
                report.append(f"    text only the {side} holds: "
                              + ", ".join(repr(text.decode()) for text in sorted(only)[:6]))
    raise AssertionError(f"{what} changed what the build wrote:\n" + "\n".join(report))


def give_to_nobody(folder):
    """`folder` and everything in it, owned by nobody (who builds it)."""
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
