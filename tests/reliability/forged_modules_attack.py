"""Forged built modules against the runtime's import, `kiln audit` and
`kiln inspect`.

Builds examples/vector_add.py, then forges its manifest the way someone
editing the file on purpose would (checksums kept consistent): every key of
every specialization, of the manifest and of each parameter replaced by each
of a set of hostile values, or removed. Each forgery is imported in a fresh
interpreter (KILN_TARGET=cpu), each of its kernels used (the runtime checks
a specialization's manifest entry at its kernel's first use) and one
launched when it imports, and given to `kiln audit` and `kiln inspect`.

    python tests/reliability/forged_modules_attack.py [--kiln build/driver/kiln] [--limit N]

Prints how each forgery ended; exits 1 if any import ended in anything but
success, an ImportError or a kernel's first use refusing the module (a
RuntimeError saying it is damaged), or audit or inspect passed a module the
runtime refused (or refused one it ran).
"""

import argparse
import collections
import concurrent.futures
import copy
import json
import os
import pathlib
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "driver"))
from kiln_module_format import read_manifest, with_manifest  # noqa: E402

HOSTILE = [None, [], {}, "x", -1, 2**70, 1.5, True, [[[]]], {"a": 1}]
GONE = object()

# A forgery that renames the kernel imports a module without add_kernel:
# harmless, as the name is only what Python calls it.
LAUNCH = """
import numpy as np, kiln.kernel, vector_add
for value in vars(vector_add).values():
    if isinstance(value, kiln.kernel.Kernel):
        value.signatures
kernel = getattr(vector_add, "add_kernel", None)
if kernel is not None:
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    kernel[2, 32](x, x, out)
    assert (out == 2 * x).all(), "wrong result"
"""


def forgeries(manifest):
    """(label, forged manifest) for every hostile edit."""
    def edits(path, value):
        if isinstance(value, dict):
            for key in value:
                yield from edits(path + [key], value[key])
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for index, item in enumerate(value[:2]):
                yield from edits(path + [index], item)
        yield path
    for path in edits([], manifest):
        if not path:
            continue
        for replacement in HOSTILE + [GONE]:
            forged = copy.deepcopy(manifest)
            holder = forged
            for step in path[:-1]:
                holder = holder[step]
            if replacement is GONE:
                if isinstance(holder, dict):
                    del holder[path[-1]]
                else:
                    continue
            else:
                holder[path[-1]] = replacement
            label = "/".join(map(str, path)) + " = " + ("<removed>" if replacement is GONE else json.dumps(replacement))
            yield label, forged


def attack_one(module, label, manifest, kiln, work, package_dir):
    folder = pathlib.Path(tempfile.mkdtemp(dir=work))
    text = json.dumps(manifest, separators=(",", ":")).encode()
    try:
        data = with_manifest(module.read_bytes(), text)
    except AssertionError:
        return label, "too long to forge", None, None
    (folder / module.name).write_bytes(data)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(package_dir)]), KILN_TARGET="cpu")
    try:
        result = subprocess.run([sys.executable, "-c", LAUNCH], capture_output=True, text=True, env=env, timeout=60)
        if result.returncode < 0:
            outcome = f"signal {-result.returncode}"
        elif result.returncode == 0:
            outcome = "imported and ran"
        else:
            last = (result.stderr.strip().splitlines() or ["?"])[-1]
            if last.startswith("ImportError: kiln: module"):
                outcome = "ImportError"
            elif last.startswith("RuntimeError: kiln: module 'vector_add' is damaged:"):
                outcome = "refused at first use"
            else:
                outcome = f"other: {last[:120]}"
    except subprocess.TimeoutExpired:
        outcome = "hang"
    audit = subprocess.run([kiln, "audit", str(folder)], capture_output=True, text=True, timeout=60).returncode
    inspect = subprocess.run([kiln, "inspect", str(folder / module.name)], capture_output=True, text=True,
                             timeout=60).returncode
    return label, outcome, audit, inspect


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=str(REPO / "build" / "driver" / "kiln"))
    parser.add_argument("--limit", type=int, default=0, help="at most this many forgeries")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    options = parser.parse_args()
    package_dir = pathlib.Path(options.kiln).resolve().parents[1] / "python"
    with tempfile.TemporaryDirectory() as work:
        work = pathlib.Path(work)
        built = subprocess.run([options.kiln, "build", str(REPO / "examples" / "vector_add.py"), "--module",
                                "vector_add", "-o", str(work / "built"), "--arch", "80"],
                               capture_output=True, text=True)
        if built.returncode:
            sys.exit(f"kiln build failed:\n{built.stderr}")
        (module,) = (work / "built").glob("*.so")
        manifest = read_manifest(module.read_bytes())
        cases = list(forgeries(manifest))
        if options.limit:
            cases = cases[:options.limit]
        outcomes = collections.Counter()
        bad = []
        with concurrent.futures.ThreadPoolExecutor(options.jobs) as pool:
            for label, outcome, audit, inspect in pool.map(
                    lambda case: attack_one(module, *case, options.kiln, work, package_dir), cases):
                outcomes[outcome.split(":")[0]] += 1
                refused = outcome in ("ImportError", "refused at first use")
                agrees = audit is None or ((audit != 0) == refused and (inspect != 0) == refused)
                if outcome not in ("ImportError", "refused at first use", "imported and ran",
                                   "too long to forge") or not agrees:
                    bad.append(f"{label}: import {outcome}, audit exit {audit}, inspect exit {inspect}")
    print(f"{len(cases)} forged modules:")
    for outcome, count in sorted(outcomes.items()):
        print(f"  {count:5d}  {outcome}")
    print(f"  {len(bad):5d}  ending badly or judged differently by import and audit/inspect")
    for line in bad:
        print("   ", line)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
