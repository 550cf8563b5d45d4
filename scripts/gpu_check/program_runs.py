"""Runs built differential-tester programs (tests/differential/programs.py)
as the device check compares them, on this machine's CPU engine when the
bundle is made and on the GPU when it is checked: each program's result is
each output array's SHA-256 (of the differential tester's encoding, in
which NaNs are canonical), or the error it raised. 1,000 programs' outputs
themselves would outgrow what travels to a GPU machine; a digest per array
still says which array differs."""

import hashlib
import json
import pathlib
import subprocess
import sys

DIFFERENTIAL = pathlib.Path(__file__).resolve().parents[2] / "tests" / "differential"
sys.path.insert(0, str(DIFFERENTIAL))

import oracles  # noqa: E402


def fingerprint(result):
    """A run's result as oracles.RUN_KERNELS records it ({"outputs": {name:
    encoded}} or {"error": text}), with each output replaced by its digest."""
    if "outputs" not in result:
        return dict(result)
    return {"outputs": {name: hashlib.sha256(str(encoded).encode()).hexdigest()
                        for name, encoded in result["outputs"].items()}}


def run_programs(folder, module, seeds, environment, timeout):
    """Imports the built `module` from `folder` in a fresh process with
    `environment` and launches the program of each seed: ({seed as text:
    fingerprint}, the finished process)."""
    done = subprocess.run([sys.executable, "-c", oracles.RUN_KERNELS, DIFFERENTIAL, folder,
                           "programs", "kiln", module, json.dumps(seeds)],
                          capture_output=True, text=True, env=environment, timeout=timeout)
    results = {str(seed): fingerprint(result)
               for seed, result in oracles.parse_runs(done.stdout).items()}
    return results, done
