#!/usr/bin/env python3
"""Re-runs every adversarial review of Kiln and prints its figures.

    python tests/reliability/run_attacks.py [--kiln build/driver/kiln]

One part per attack, each a script of this folder (or the cache's tests),
each exiting 1 when a promise of docs/reliability.md does not hold:

  cpu-engine   48 bad array offsets over four kernels on the CPU engine:
               every one an IndexError, no signal (test_cpu_engine_attack.py)
  modules      every key of a built module's manifest forged: each forgery
               refused alike by the import, `kiln audit` and `kiln inspect`,
               or imported and run correctly (forged_modules_attack.py)
  driver       a full disk, deep programs, inputs and tools that never
               answer, signals mid-build, usage errors (driver_attack.py)
  cache        concurrent builds, SIGKILLs, damaged blobs and indexes,
               malicious and poisoned archives, read-only and nested
               metadata (the tests of tests/cache)

Exits 1 if any part does.
"""

import argparse
import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=str(REPO / "build" / "driver" / "kiln"))
    parser.add_argument("--only", choices=["cpu-engine", "modules", "driver", "cache"], action="append")
    options = parser.parse_args()
    build = pathlib.Path(options.kiln).resolve().parents[1]
    env = dict(os.environ, KILN_BUILD_DIR=str(build), KILN=options.kiln,
               PYTHONPATH=os.pathsep.join(filter(None, [str(build / "python"), os.environ.get("PYTHONPATH")])))
    parts = {
        "cpu-engine": [sys.executable, str(HERE / "test_cpu_engine_attack.py")],
        "modules": [sys.executable, str(HERE / "forged_modules_attack.py"), "--kiln", options.kiln],
        "driver": [sys.executable, str(HERE / "driver_attack.py"), "--kiln", options.kiln],
        "cache": [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(REPO / "tests" / "cache")],
    }
    failed = []
    for name, command in parts.items():
        if options.only and name not in options.only:
            continue
        print(f"==> {name}", flush=True)
        began = time.monotonic()
        result = subprocess.run(command, env=env, cwd=REPO)
        print(f"==> {name}: {'held' if result.returncode == 0 else 'FAILED'} "
              f"({time.monotonic() - began:.0f} s)\n", flush=True)
        if result.returncode:
            failed.append(name)
    if failed:
        print("promises broken in: " + ", ".join(failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
