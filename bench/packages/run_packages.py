"""PyPI package campaign: packages that keep `@cuda.jit` kernels in ordinary
modules beside their host code, migrated to Kiln with the one import line,
and their own GPU tests run on Numba's simulator and on Kiln's CPU engine.

    .venv/bin/python bench/packages/run_packages.py [--packages stumpy,...]
        [--modes sim,kiln,warm[,probe]] [--json report.json] [--cache DIR]
        [--work DIR] [--venv DIR] [--timeout 1200] [--offline]

Modes (each test file runs once per mode, the modes taking turns file by file
so that other load on the machine falls on all of them alike):

  sim    the sdist as published, NUMBA_ENABLE_CUDASIM=1;
  kiln   a copy where every `from numba import cuda` (and `import numba.cuda
         as cuda`, `from numba.cuda import X`, `numba.cuda.X` in code) of the
         package's modules and tests says `kiln` instead, on Kiln's CPU engine
         (KILN_TARGET=cpu), Kiln's compile cache and Numba's own cache both
         empty at the start: every kernel is compiled in the timed run;
  warm   the kiln copy again right after, on the caches kiln filled;
  probe  (diagnosis, not counted) the kiln copy plus the package's `probe`
         hand edits, to see what fails once the first root cause is out of
         the way.

Each package's sdist is pinned (version and sha256) and downloaded once from
PyPI into --cache. Its test dependencies go into a scratch venv (--venv,
default /tmp/kiln-pkgvenv) that sees /work/main/.venv's packages (numba,
numba-cuda, NumPy, pytest, and Kiln's runtime through the build's .pth) and
is constrained to their versions, so .venv itself is never changed. Each
test file runs in a pytest process of its own, under `timeout`; outcomes come
from --junitxml, or from pytest's -v lines where a process was killed or
crashed before writing it.

Prints a table (package, version, tests, passed sim, passed kiln, failed
kiln, both-pass, kiln-only, sim-only, wall and CPU seconds) and, for every
test that fails on Kiln, its first error, grouped by root cause; exits 0
when every package meets the bar (no test failing on Kiln, at least as many
passing as on the simulator, less wall time cold). Stdlib only.
"""

import argparse
import ast
import collections
import dataclasses
import hashlib
import io
import json
import os
import pathlib
import re
import resource
import shutil
import subprocess
import sys
import tarfile
import time
import tokenize
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
MAIN_VENV = REPO / ".venv"


@dataclasses.dataclass
class Run:
    """One pytest process: test paths (relative to the sdist root) and an
    optional -k expression."""
    paths: list
    k: str = ""


@dataclasses.dataclass
class Package:
    name: str
    version: str
    sha256: str
    why: str
    deps: list            # pip requirements of the tests, beyond .venv's
    migrate: list         # files and folders whose imports are rewritten
    runs: list            # [Run]
    pythonpath: list = dataclasses.field(default_factory=lambda: ["."])
    note: str = ""        # how the GPU tests were chosen
    # Mode "probe" only (diagnosis, not migration): [(glob, regex, replacement)]
    # applied to a copy of the migrated tree, to see what fails once the first
    # root cause is worked around by hand.
    probe: list = dataclasses.field(default_factory=list)


PACKAGES = [
    Package(
        name="stumpy", version="1.14.1",
        sha256="1cb13696724ddab4b512b16843d37ccf4047aee19e072d1ad83024e1fa6fde96",
        why="matrix profiles: gpu_stump.py, gpu_aamp.py and core.py keep @cuda.jit "
            "kernels and device functions beside the host code that launches them",
        deps=["scipy", "pandas", "dask", "distributed"],
        migrate=["stumpy", "tests", "conftest.py"],
        # test.sh's test_gpu: every test file that mentions gpu. The GPU files
        # whole; of test_core, test_precision and test_non_normalized_decorator
        # the tests whose names say gpu.
        runs=[Run([f"tests/test_gpu_{n}.py"]) for n in (
            "stump", "aamp", "ostinato", "aamp_ostinato", "mpdist", "aampdist",
            "stimp", "aamp_stimp")] +
             [Run(["tests/test_core.py"], "gpu"), Run(["tests/test_precision.py"], "gpu"),
              Run(["tests/test_non_normalized_decorator.py"], "gpu")],
        note="stumpy's own GPU selection (test.sh test_gpu): tests/test_gpu_*.py, and -k gpu "
             "in test_core.py, test_precision.py, test_non_normalized_decorator.py",
        # fastmath=<set of flags> on core.py's host-side @njit functions
        # (repros/fastmath_flag_set.py) stops every kernel; a bool instead.
        probe=[("stumpy/*.py", r"fastmath=config\.STUMPY_FASTMATH_FLAGS", "fastmath=True")],
    ),
    Package(
        name="sarracen", version="1.4.1",
        sha256="e8c162f98c606276a66b076dcb366aaab02a909e09a8cb92079dcbd0d5033c56",
        why="SPH interpolation: sarracen/interpolate/gpu_backend.py keeps @cuda.jit kernels "
            "beside the host methods that launch them; tests add backend 'gpu' when "
            "cuda.is_available()",
        deps=["pandas", "scipy", "matplotlib", "seaborn", "scikit-learn"],
        migrate=["sarracen"],
        runs=[Run(["sarracen/tests/interpolate/test_interpolate.py"],
                  "gpu and not test_single_repeated_particle"),
              Run(["sarracen/tests/interpolate/test_rotation.py"], "gpu"),
              Run(["sarracen/tests/test_render.py"], "gpu")],
        note="the tests parametrized with backend 'gpu' (-k gpu) in the three test files that "
             "import numba.cuda, less test_single_repeated_particle (10,000 particles, each "
             "adding to 625 pixels with atomics: more than 5 minutes on the simulator, where "
             "the other 77 take 6 minutes together)",
    ),
    Package(
        name="aquagrid", version="0.3.2",
        sha256="e321274d6adee8ccd0b5eda8f8522183450da419ad130a625cafb46d248d553b",
        why="AquaCrop on rasters: engine/gpu.py makes a @cuda.jit kernel at first use that "
            "calls device functions which kernels/loader.py compiles from the backend-neutral "
            "kernels/impl.py (2,400 lines) with cuda.jit(device=True)",
        deps=["pandas", "xarray>=2026.9", "zarr>=3", "dask", "typer", "pyyaml", "aquacrop>=3.0.11"],
        migrate=["src/aquagrid", "tests"],
        runs=[Run(["tests/test_gpu.py"])],
        pythonpath=["src"],
        note="tests/test_gpu.py, the package's one GPU test (GPU against CPU parity)",
    ),
]


# --- Download and unpack ---------------------------------------------------------


def sdist_name(pkg):
    return f"{pkg.name.replace('-', '_')}-{pkg.version}.tar.gz"


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def download(pkg, cache, offline):
    """The pinned sdist in `cache`, downloaded from PyPI if it is not there."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / sdist_name(pkg)
    if path.exists() and sha256_of(path) == pkg.sha256:
        return path
    if offline:
        sys.exit(f"error: {path} is not in the cache and --offline was given")
    url = None
    try:
        index = f"https://pypi.org/pypi/{pkg.name}/json"
        with urllib.request.urlopen(index, timeout=60) as r:
            meta = json.load(r)
        for f in meta.get("releases", {}).get(pkg.version, []):
            if f["packagetype"] == "sdist":
                url = urllib.parse.urljoin(index, f["url"])  # a mirror may give it relative
        if url:
            tmp = path.with_suffix(".part")
            with urllib.request.urlopen(url, timeout=300) as r, open(tmp, "wb") as out:
                shutil.copyfileobj(r, out)
            tmp.rename(path)
    except (urllib.error.URLError, OSError, ValueError) as e:
        print(f"  PyPI's JSON API failed ({e}); trying pip download", flush=True)
    if not path.exists():
        done = subprocess.run([str(MAIN_VENV / "bin" / "python"), "-m", "pip", "download", "-q",
                               "--no-deps", "--no-binary", ":all:", "--no-build-isolation",
                               f"{pkg.name}=={pkg.version}", "-d", str(cache)],
                              capture_output=True, text=True)
        if not path.exists():
            sys.exit(f"error: cannot download {pkg.name} {pkg.version} from PyPI (offline?). "
                     f"Put {path.name} (sha256 {pkg.sha256}) in {cache} and rerun.\n"
                     f"{done.stderr.strip()[-1500:]}")
    got = sha256_of(path)
    if got != pkg.sha256:
        path.unlink()
        sys.exit(f"error: {path.name} has sha256 {got}, pinned {pkg.sha256}")
    return path


def unpack(archive, dest):
    """The sdist's top folder, unpacked afresh under dest."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    (top,) = [p for p in dest.iterdir() if p.is_dir()]
    return top


# --- The scratch venv -------------------------------------------------------------


def main_site_packages():
    out = subprocess.run([str(MAIN_VENV / "bin" / "python"), "-c",
                          "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def ensure_venv(venv, packages, offline):
    """A venv that sees .venv's packages (numba, numba-cuda, NumPy, pytest,
    Kiln) and holds the tests' other dependencies, constrained to .venv's
    versions of what both have."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([str(MAIN_VENV / "bin" / "python"), "-m", "venv", str(venv)], check=True)
        purelib = subprocess.run([str(python), "-c",
                                  "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        # After the venv's own site-packages, so that .venv's .pth files
        # (Kiln's build folder among them) are read too.
        pathlib.Path(purelib, "zz_kiln_main_venv.pth").write_text(
            f"import site; site.addsitedir({main_site_packages()!r})\n")
    pins = subprocess.run([str(MAIN_VENV / "bin" / "python"), "-c",
                           "import importlib.metadata as m\n"
                           "for d in ('numpy','numba','llvmlite','numba-cuda','pytest'):\n"
                           "    print(f'{d}=={m.version(d)}')"],
                          capture_output=True, text=True, check=True).stdout
    constraints = venv / "constraints.txt"
    constraints.write_text(pins)
    deps = sorted({d for p in packages for d in p.deps})
    check = subprocess.run([str(python), "-c", "import sys, importlib.metadata as m\n"
                            "from packaging.requirements import Requirement\n"
                            "missing = []\n"
                            "for r in map(Requirement, sys.argv[1:]):\n"
                            "    try: v = m.version(r.name)\n"
                            "    except m.PackageNotFoundError: missing.append(str(r)); continue\n"
                            "    if not r.specifier.contains(v, prereleases=True): missing.append(str(r))\n"
                            "print(' '.join(missing))", *deps], capture_output=True, text=True)
    missing = check.stdout.split() if check.returncode == 0 else deps
    if missing:
        if offline:
            sys.exit(f"error: the scratch venv {venv} lacks {missing} and --offline was given")
        print(f"  installing into {venv}: {' '.join(missing)}", flush=True)
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", "-c", str(constraints),
                               *missing], capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"error: pip install {' '.join(missing)} failed:\n{done.stderr[-3000:]}")
    return python


# --- Migration: the one import line --------------------------------------------------

# numba.cuda's submodules that are Numba's own machinery, not the API that
# kiln.cuda stands in for: imports of them are left as they are, and reported.
NUMBA_INTERNAL_SUBMODULES = {"testing", "cudadrv", "simulator", "tests", "core", "kernels",
                             "cuda_paths", "api", "dispatcher", "compiler", "descriptor", "target",
                             "types", "typing", "np", "extending"}

FROM_NUMBA = re.compile(r"^(\s*)from\s+numba\s+import\s+([^()#\\]+?)\s*(#.*)?$")
IMPORT_NUMBA_CUDA_AS = re.compile(r"^(\s*)import\s+numba\.cuda\s+as\s+(\w+)\s*(#.*)?$")
IMPORT_NUMBA_CUDA = re.compile(r"^(\s*)import\s+numba\.cuda\s*(#.*)?$")
FROM_NUMBA_CUDA = re.compile(r"^(\s*)from\s+numba\.cuda\s+import\s+(.+)$")
FROM_NUMBA_CUDA_SUB = re.compile(r"^\s*from\s+numba\.cuda\.(\w+)")


def attribute_uses(source):
    """(line, column) of each `numba.cuda.NAME` in code (not in strings or
    comments) where NAME is API, not a Numba submodule."""
    uses = []
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
                  if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)]
    except (tokenize.TokenError, SyntaxError):
        return uses
    for i in range(len(tokens) - 4):
        a, d1, b, d2, c = tokens[i:i + 5]
        if (a.type == tokenize.NAME and a.string == "numba" and d1.string == "." and
                b.string == "cuda" and d2.string == "." and c.type == tokenize.NAME and
                c.string not in NUMBA_INTERNAL_SUBMODULES and
                (i == 0 or tokens[i - 1].string not in (".", "import", "from"))):
            uses.append((a.start[0], a.start[1]))
    return uses


def migrate_source(source):
    """The source with its numba.cuda imports made kiln's, and a list of
    (line number, before, after) and of the numba.cuda lines left."""
    lines = source.splitlines(keepends=True)
    changes, left = [], []
    needs_kiln_cuda = False
    # `numba.cuda.X` in code, rewritten column by column from the end.
    for lineno, col in reversed(attribute_uses(source)):
        line = lines[lineno - 1]
        new = line[:col] + "kiln" + line[col + len("numba"):]
        changes.append((lineno, line.rstrip("\n"), new.rstrip("\n")))
        lines[lineno - 1] = new
        needs_kiln_cuda = True
    out = []
    for lineno, line in enumerate(lines, 1):
        body = line.rstrip("\n")
        eol = line[len(body):]
        new = None
        m = FROM_NUMBA.match(body)
        if m:
            indent, names, comment = m.group(1), m.group(2), m.group(3) or ""
            parts = [p.strip() for p in names.split(",") if p.strip()]
            cuda = [p for p in parts if re.fullmatch(r"cuda(\s+as\s+\w+)?", p)]
            if cuda:
                rest = [p for p in parts if p not in cuda]
                new = f"{indent}from kiln import {cuda[0]}" + (f"  {comment}" if comment else "")
                if rest:
                    new += f"{eol}{indent}from numba import {', '.join(rest)}"
        elif IMPORT_NUMBA_CUDA_AS.match(body):
            m = IMPORT_NUMBA_CUDA_AS.match(body)
            new = f"{m.group(1)}from kiln import cuda as {m.group(2)}"
        elif IMPORT_NUMBA_CUDA.match(body):
            new = f"{IMPORT_NUMBA_CUDA.match(body).group(1)}import kiln.cuda"
            needs_kiln_cuda = False
        elif FROM_NUMBA_CUDA.match(body):
            m = FROM_NUMBA_CUDA.match(body)
            new = f"{m.group(1)}from kiln.cuda import {m.group(2)}"
        elif FROM_NUMBA_CUDA_SUB.match(body):
            left.append((lineno, body.strip()))
        if new is not None and new != body:
            changes.append((lineno, body, new))
            out.append(new + eol)
        else:
            out.append(line)
    text = "".join(out)
    if needs_kiln_cuda and not re.search(r"^\s*import kiln\.cuda\b", text, re.M):
        # After the module docstring and __future__ imports.
        insert_at = 0
        try:
            tree = ast.parse(text)
            for node in tree.body:
                is_doc = (insert_at == 0 and isinstance(node, ast.Expr) and
                          isinstance(node.value, ast.Constant) and isinstance(node.value.value, str))
                is_future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
                if is_doc or is_future:
                    insert_at = node.end_lineno
                else:
                    break
        except SyntaxError:
            pass
        out_lines = text.splitlines(keepends=True)
        out_lines.insert(insert_at, "import kiln.cuda\n")
        text = "".join(out_lines)
        changes.append((insert_at + 1, "", "import kiln.cuda"))
    return text, sorted(changes), left


def migrate_tree(root, targets):
    """Rewrites the numba.cuda imports of the .py files under `targets`
    (relative to root); returns {file: {"changes": [...], "left": [...]}}."""
    report = {}
    files = []
    for t in targets:
        p = root / t
        files += [p] if p.is_file() else sorted(p.rglob("*.py"))
    for path in files:
        source = path.read_text(encoding="utf-8")
        new, changes, left = migrate_source(source)
        if changes:
            path.write_text(new, encoding="utf-8")
        if changes or left:
            report[str(path.relative_to(root))] = {
                "changes": [{"line": n, "before": b, "after": a} for n, b, a in changes],
                "left": [{"line": n, "text": t} for n, t in left]}
    return report


# --- Running the tests -------------------------------------------------------------

VERBOSE_LINE = re.compile(r"^(\S+::\S.*?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b")


def nodeid_to_key(nodeid):
    """'tests/test_a.py::Cls::test_b[x]' -> 'tests.test_a.Cls::test_b[x]', the
    form of junitxml's classname::name."""
    head, bracket, params = nodeid.partition("[")
    parts = head.split("::")
    parts[-1] += bracket + params
    module = parts[0][:-3] if parts[0].endswith(".py") else parts[0]
    module = module.replace("/", ".")
    classname = ".".join([module] + parts[1:-1])
    return f"{classname}::{parts[-1]}"


def first_error(text, message):
    """The first line that names an exception: the error a person reads first."""
    candidates = []
    if message:
        candidates.append(message.strip())
    for line in (text or "").splitlines():
        s = line.strip()
        if s.startswith("E   ") or s.startswith("E "):
            candidates.append(s[1:].strip())
    for c in candidates:
        if re.match(r"^[\w.]*(Error|Exception|Warning|Exit|Interrupt)\b", c) or "error:" in c:
            return c[:600]
    return (candidates[0] if candidates else "")[:600]


def parse_junit(path):
    results = {}
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, FileNotFoundError):
        return None
    for case in root.iter("testcase"):
        key = f"{case.get('classname')}::{case.get('name')}"
        outcome, message, text = "passed", "", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                new = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                # an error in teardown after a failure keeps the failure
                if outcome == "passed" or (outcome == "skipped" and new != "skipped"):
                    outcome = new
                    message, text = child.get("message") or "", child.text or ""
        results[key] = {"outcome": outcome, "seconds": float(case.get("time") or 0),
                        "error": first_error(text, message) if outcome in ("failed", "error") else
                        (message[:300] if outcome == "skipped" else ""),
                        "detail": text[-3000:] if outcome in ("failed", "error") else ""}
    return results


def run_pytest(python, top, run, env, junit, log, timeout):
    args = [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=",
            "-v", "-rA", "--tb=short", f"--junitxml={junit}", *run.paths]
    if run.k:
        args += ["-k", run.k]
    if junit.exists():
        junit.unlink()
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(log, "w") as out:
        done = subprocess.run(["timeout", "--kill-after=30", str(timeout), *args], cwd=top, env=env,
                              stdout=out, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    results = parse_junit(junit)
    ended = None
    if done.returncode in (124, 137):
        ended = f"timed out after {timeout} s"
    elif done.returncode < 0 or done.returncode > 5:
        ended = f"pytest ended with status {done.returncode}"
    if results is None:
        # Killed or crashed before writing the XML: what -v printed.
        results = {}
        text = pathlib.Path(log).read_text(errors="replace")
        for line in text.splitlines():
            m = VERBOSE_LINE.match(line)
            if m:
                outcome = {"PASSED": "passed", "FAILED": "failed", "ERROR": "error",
                           "SKIPPED": "skipped", "XFAIL": "skipped", "XPASS": "passed"}[m.group(2)]
                results[nodeid_to_key(m.group(1))] = {"outcome": outcome, "seconds": 0.0,
                                                      "error": "", "detail": ""}
        tail = text.strip().splitlines()[-1:] or [""]
        ended = (ended or f"pytest ended with status {done.returncode}") + f" without junitxml: {tail[0][:300]}"
    return {"paths": run.paths, "k": run.k, "returncode": done.returncode, "seconds": round(seconds, 2),
            "cpu_seconds": round(cpu, 2), "ended": ended, "log": str(log), "tests": results}


def base_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("KILN_") and not k.startswith("NUMBA_") and k != "PYTHONPATH"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def apply_probe(root, probe):
    changed = 0
    for pattern, regex, replacement in probe:
        for path in sorted(root.glob(pattern)):
            text = path.read_text(encoding="utf-8")
            new, n = re.subn(regex, replacement, text)
            if n:
                path.write_text(new, encoding="utf-8")
                changed += n
    return changed


def mode_env(pkg, mode, top, work, warm_cache):
    env = base_env()
    env["PYTHONPATH"] = os.pathsep.join(str(top / p) for p in pkg.pythonpath)
    # Numba's own cache (the packages' @njit(cache=True) CPU code): fresh for
    # each mode's first run, as Kiln's compile cache is; "warm" shares kiln's.
    numba_cache = work / f"numba-cache-{'kiln' if mode == 'warm' else mode}"
    if numba_cache.exists() and not warm_cache and mode != "warm":
        shutil.rmtree(numba_cache)
    env["NUMBA_CACHE_DIR"] = str(numba_cache)
    if mode == "sim":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        env["KILN_TARGET"] = "cpu"
        # "warm" runs each file again right after "kiln", on the compile
        # cache the "kiln" run just filled.
        cache = work / ("kiln-cache" if mode == "warm" else f"{mode}-cache")
        if cache.exists() and not warm_cache and mode != "warm":
            shutil.rmtree(cache)
        env["KILN_CACHE_DIR"] = str(cache)
    return env


def run_modes(pkg, trees, python, work, timeout, warm_cache):
    """{mode: [run]} for the modes of `trees` ({mode: source tree}). The modes
    take turns file by file, so that a change in the machine's load (other
    work on the same cores) falls on all of them alike."""
    envs = {mode: mode_env(pkg, mode, top, work, warm_cache) for mode, top in trees.items()}
    runs = {mode: [] for mode in trees}
    for i, run in enumerate(pkg.runs):
        label = " ".join(run.paths) + (f" -k '{run.k}'" if run.k else "")
        print(f"  {label}", flush=True)
        for mode, top in trees.items():
            r = run_pytest(python, top, run, envs[mode], work / f"{mode}-{i}.xml", work / f"{mode}-{i}.log",
                           timeout)
            counts = collections.Counter(t["outcome"] for t in r["tests"].values())
            print(f"    {mode:5s} {r['seconds']:7.1f} s wall {r['cpu_seconds']:7.1f} s cpu  " +
                  ", ".join(f"{n} {o}" for o, n in sorted(counts.items())) +
                  (f" ({r['ended']})" if r["ended"] else ""), flush=True)
            runs[mode].append(r)
    return runs


# --- Root causes --------------------------------------------------------------------


def root_cause(error):
    """A short name for the kind of failure, the same for the same gap."""
    e = error or "(no message)"
    m = re.search(r"module 'kiln\.cuda[\w.]*' has no attribute '(\w+)'", e)
    if m:
        return f"kiln.cuda lacks {m.group(1)}"
    if re.search(r"module '_\w+_kiln' has no attribute '\w+'", e):
        return "Kiln's build of the module lacks a kernel that the module defines"
    m = re.search(r"error: (.*)", e)
    if "CompileError" in e or (m and re.search(r"\.py:\d+:\d+: error:", e)):
        msg = m.group(1) if m else e
        msg = re.sub(r"'[^']*'", "'…'", msg)
        msg = re.sub(r"\d+", "N", msg)
        return "compiler refuses: " + msg[:200]
    if e.startswith("AssertionError") or "Mismatch" in e or "Not equal to tolerance" in e:
        return "wrong result (the test's assertion failed)"
    m = re.match(r"^([\w.]+(?:Error|Exception))\b:?\s*(.*)", e)
    if m:
        msg = re.sub(r"'[^']*'", "'…'", m.group(2))
        msg = re.sub(r"\d+", "N", msg)
        return f"{m.group(1)}: {msg[:160]}"
    return e[:160]


# --- Report ---------------------------------------------------------------------------


def merge(runs):
    tests = {}
    for r in runs:
        tests.update(r["tests"])
    return tests


def summarize(pkg, sim_runs, kiln_runs, migration):
    sim, kiln = merge(sim_runs or []), merge(kiln_runs or [])
    ids = sorted(set(sim) | set(kiln))
    row = {"package": pkg.name, "version": pkg.version, "tests": len(ids)}

    def outcome(d, i):
        return d.get(i, {}).get("outcome", "not run")

    row["passed_sim"] = sum(outcome(sim, i) == "passed" for i in ids)
    row["passed_kiln"] = sum(outcome(kiln, i) == "passed" for i in ids)
    row["failed_kiln"] = sum(outcome(kiln, i) in ("failed", "error", "not run") for i in ids
                             if kiln_runs is not None)
    row["skipped_sim"] = sum(outcome(sim, i) == "skipped" for i in ids)
    row["skipped_kiln"] = sum(outcome(kiln, i) == "skipped" for i in ids)
    row["both_pass"] = sum(outcome(sim, i) == "passed" and outcome(kiln, i) == "passed" for i in ids)
    row["kiln_only"] = sum(outcome(sim, i) != "passed" and outcome(kiln, i) == "passed" for i in ids)
    row["sim_only"] = sum(outcome(sim, i) == "passed" and outcome(kiln, i) != "passed" for i in ids)
    row["sim_s"] = round(sum(r["seconds"] for r in sim_runs), 1) if sim_runs is not None else None
    row["kiln_s"] = round(sum(r["seconds"] for r in kiln_runs), 1) if kiln_runs is not None else None
    row["sim_cpu_s"] = round(sum(r["cpu_seconds"] for r in sim_runs), 1) if sim_runs is not None else None
    row["kiln_cpu_s"] = round(sum(r["cpu_seconds"] for r in kiln_runs), 1) if kiln_runs is not None else None
    row["lines_migrated"] = sum(len(f["changes"]) for f in migration.values())
    row["files_migrated"] = sum(1 for f in migration.values() if f["changes"])
    row["ok"] = (sim_runs is not None and kiln_runs is not None and row["failed_kiln"] == 0 and
                 row["passed_kiln"] >= row["passed_sim"] and row["kiln_s"] < row["sim_s"])
    failures = []
    for i in ids:
        if kiln_runs is not None and outcome(kiln, i) in ("failed", "error", "not run"):
            t = kiln.get(i, {})
            err = t.get("error", "") or ("not run: " + "; ".join(
                r["ended"] or "" for r in kiln_runs if r["ended"]))
            failures.append({"test": i, "sim": outcome(sim, i), "kiln": outcome(kiln, i),
                             "error": err, "cause": root_cause(err), "detail": t.get("detail", "")})
    per_test = {i: {"sim": outcome(sim, i), "kiln": outcome(kiln, i),
                    "sim_s": sim.get(i, {}).get("seconds"), "kiln_s": kiln.get(i, {}).get("seconds")}
                for i in ids}
    return row, failures, per_test


COLUMNS = [("package", "package"), ("version", "version"), ("tests", "tests"),
           ("passed_sim", "passed sim"), ("passed_kiln", "passed kiln"), ("failed_kiln", "failed kiln"),
           ("both_pass", "both-pass"), ("kiln_only", "kiln-only"), ("sim_only", "sim-only"),
           ("sim_s", "sim s"), ("kiln_s", "kiln s"), ("sim_cpu_s", "sim cpu s"), ("kiln_cpu_s", "kiln cpu s"),
           ("warm_s", "kiln warm s"),
           ("lines_migrated", "lines migrated"), ("ok", "meets bar")]


def print_table(rows):
    cells = [[h for _, h in COLUMNS]] + [["" if r[k] is None else str(r[k]) for k, _ in COLUMNS]
                                         for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    for n, c in enumerate(cells):
        print("  ".join(x.ljust(w) for x, w in zip(c, widths)))
        if n == 0:
            print("  ".join("-" * w for w in widths))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--packages", default=",".join(p.name for p in PACKAGES),
                        help="comma-separated names (default: all)")
    parser.add_argument("--modes", default="sim,kiln,warm",
                        help="of sim, kiln (cold compile cache), warm (kiln again on the cache kiln "
                             "filled) and probe (diagnosis); default sim,kiln,warm")
    parser.add_argument("--cache", type=pathlib.Path, default=pathlib.Path("/tmp/kiln-pkg-cache"),
                        help="where sdists are kept")
    parser.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/kiln-pkg-work"),
                        help="where sdists are unpacked and migrated (laid anew each run)")
    parser.add_argument("--venv", type=pathlib.Path, default=pathlib.Path("/tmp/kiln-pkgvenv"),
                        help="scratch venv for the tests' dependencies")
    parser.add_argument("--timeout", type=int, default=1200, help="seconds per pytest process")
    parser.add_argument("--offline", action="store_true", help="use only the cache and the venv as they are")
    parser.add_argument("--warm-cache", action="store_true",
                        help="keep Kiln's compile cache from the previous run (default: compile afresh)")
    parser.add_argument("--json", type=pathlib.Path, help="write the full report here")
    parser.add_argument("--summary", type=pathlib.Path,
                        help="write each package's counts and root causes here "
                             "(bench/packages/results.json, which docs/conformance.md shows), "
                             "keeping the other packages the file holds")
    args = parser.parse_args()

    # The Kiln the run tests: the commit checked out when it starts.
    kiln_commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                 cwd=pathlib.Path(__file__).resolve().parent).stdout.strip()
    wanted = [n.strip() for n in args.packages.split(",") if n.strip()]
    unknown = set(wanted) - {p.name for p in PACKAGES}
    if unknown:
        sys.exit(f"error: unknown packages {sorted(unknown)}; known: {[p.name for p in PACKAGES]}")
    packages = [p for p in PACKAGES if p.name in wanted]
    modes = [m.strip() for m in args.modes.split(",")]

    python = ensure_venv(args.venv, packages, args.offline)
    rows, probe_rows, report = [], [], {"packages": []}
    for pkg in packages:
        print(f"{pkg.name} {pkg.version}", flush=True)
        archive = download(pkg, args.cache, args.offline)
        work = args.work / pkg.name
        orig = unpack(archive, work / "sim")
        migrated = unpack(archive, work / "kiln")
        migration = migrate_tree(migrated, pkg.migrate)
        n = sum(len(f["changes"]) for f in migration.values())
        print(f"  migrated {n} lines in {sum(1 for f in migration.values() if f['changes'])} files"
              + "".join(f"; left {f}:{x['line']}: {x['text']}" for f, v in migration.items()
                        for x in v["left"]), flush=True)
        trees = {}
        if "sim" in modes:
            trees["sim"] = orig
        if "kiln" in modes:
            trees["kiln"] = migrated
            if "warm" in modes:
                trees["warm"] = migrated
        probe_edits = 0
        if "probe" in modes and pkg.probe:
            probed = unpack(archive, work / "probe")
            migrate_tree(probed, pkg.migrate)
            probe_edits = apply_probe(probed, pkg.probe)
            print(f"  probe: {probe_edits} further edits by hand (not part of the migration)", flush=True)
            trees["probe"] = probed
        runs = run_modes(pkg, trees, python, work, args.timeout, args.warm_cache)
        sim_runs, kiln_runs = runs.get("sim"), runs.get("kiln")
        row, failures, per_test = summarize(pkg, sim_runs, kiln_runs, migration)
        if "warm" in runs:
            warm = merge(runs["warm"])
            row["passed_warm"] = sum(t["outcome"] == "passed" for t in warm.values())
            row["warm_s"] = round(sum(r["seconds"] for r in runs["warm"]), 1)
        else:
            row["passed_warm"] = row["warm_s"] = None
        rows.append(row)
        entry = {
            **row, "why": pkg.why, "selection": pkg.note, "sdist": sdist_name(pkg), "sha256": pkg.sha256,
            "migration": migration, "failures": failures, "tests_by_id": per_test,
            "runs": {"sim": [{k: v for k, v in r.items() if k != "tests"} for r in sim_runs or []],
                     "kiln": [{k: v for k, v in r.items() if k != "tests"} for r in kiln_runs or []],
                     "warm": [{k: v for k, v in r.items() if k != "tests"} for r in runs.get("warm", [])],
                     "probe": [{k: v for k, v in r.items() if k != "tests"} for r in runs.get("probe", [])]}}
        if "probe" in runs:
            prow, pfailures, _ = summarize(pkg, sim_runs, runs["probe"], migration)
            prow["package"] = f"{pkg.name} (probe)"
            prow["ok"] = prow["passed_warm"] = prow["warm_s"] = None
            probe_rows.append(prow)
            entry["probe"] = {"edits": probe_edits, "patches": [list(x) for x in pkg.probe],
                              "row": prow, "failures": pfailures}
        report["packages"].append(entry)

    print()
    print_table(rows)

    def grouped(failure_lists, title, key):
        causes = collections.Counter()
        examples = {}
        for name, failures in failure_lists:
            for f in failures:
                causes[f["cause"]] += 1
                examples.setdefault(f["cause"], f"{name}: {f['test']}: {f['error'][:300]}")
        report[key] = [{"cause": c, "tests": n, "example": examples[c]} for c, n in causes.most_common()]
        if causes:
            print(f"\n{title}")
            for c, n in causes.most_common():
                print(f"  {n:4d}  {c}\n        e.g. {examples[c]}")

    grouped([(p["package"], p["failures"]) for p in report["packages"]],
            "Tests that fail on Kiln, by root cause:", "root_causes")
    if probe_rows:
        print("\nProbe (the migration plus the hand edits of each package's `probe`, to see past "
              "the first root cause; not counted above):")
        print_table(probe_rows)
        grouped([(p["package"], p["probe"]["failures"]) for p in report["packages"] if "probe" in p],
                "Tests that still fail in the probe, by root cause:", "probe_root_causes")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1))
        print(f"\nreport: {args.json}")
    if args.summary:
        write_summary(args.summary, rows, report, modes, kiln_commit)
        print(f"summary: {args.summary}")
    return 0 if rows and all(r["ok"] for r in rows) else 1


def write_summary(path, rows, report, modes, kiln):
    """Each package's counts and root causes, with the command and the Kiln
    commit that made them; the packages this run left out keep theirs."""
    summary = json.loads(path.read_text()) if path.exists() else {}
    summary["command"] = (".venv/bin/python bench/packages/run_packages.py --modes " + ",".join(modes)
                          + " --summary bench/packages/results.json")
    ran = {}
    for row, entry in zip(rows, report["packages"]):
        causes = collections.Counter(failure["cause"] for failure in entry["failures"])
        examples = {}
        for failure in entry["failures"]:
            examples.setdefault(failure["cause"], f"{failure['test']}: {failure['error'][:300]}")
        ran[row["package"]] = {
            **{key: row[key] for key in ("package", "version", "tests", "passed_sim", "passed_kiln",
                                         "failed_kiln", "sim_s", "kiln_s", "passed_warm", "warm_s",
                                         "lines_migrated", "ok")},
            "when": f"Kiln at {kiln or 'an unknown commit'}, {time.strftime('%Y-%m-%d')}",
            "root_causes": [{"cause": cause, "count": count, "example": examples[cause]}
                            for cause, count in causes.most_common()]}
    kept = [package for package in summary.get("packages", []) if package["package"] not in ran]
    order = [package.name for package in PACKAGES]
    summary["packages"] = sorted(kept + list(ran.values()),
                                 key=lambda package: order.index(package["package"])
                                 if package["package"] in order else len(order))
    summary.pop("root_causes", None)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
