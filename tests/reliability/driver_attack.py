#!/usr/bin/env python3
"""Re-runs the adversarial review of the `kiln` driver and prints its figures:
a full disk, deep programs, inputs and tools that never answer, signals in
the middle of a build, and an invalid --arch. Every figure has the value the
driver promises (docs/cli.md); the script exits 1 if one does not.

    python tests/reliability/driver_attack.py [--kiln build/driver/kiln]

Every kiln run has a timeout: a hang is reported as a failure, never waited
out. The full-disk runs use a small tmpfs when this user may mount one
(root), and a file size limit (RLIMIT_FSIZE) otherwise.
"""

import argparse
import os
import pathlib
import resource
import signal
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "driver"))

from process_census import (default_stop_signals, live_processes,  # noqa: E402
                            marked_environment, new_marker, surviving_processes)
from test_deep_programs import device_chain, kernel_returning  # noqa: E402
from test_full_disk import KERNELS  # noqa: E402
from test_stop_signals import many_kernels, wait_for_ptxas  # noqa: E402

TIMEOUT = 120


class Attack:
    def __init__(self, kiln, scratch):
        self.kiln = kiln
        self.scratch = pathlib.Path(scratch)
        self.failures = 0
        self.counter = 0

    def folder(self):
        self.counter += 1
        path = self.scratch / f"run{self.counter}"
        path.mkdir()
        return path

    def report(self, what, figure, expected, ok):
        self.failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'}  {what}: {figure} (promised: {expected})", flush=True)

    def run(self, *args, env=None, preexec_fn=None, stdout=subprocess.PIPE):
        try:
            return subprocess.run([self.kiln, *map(str, args)], stdout=stdout,
                                  stderr=subprocess.PIPE, text=True, env=env,
                                  preexec_fn=preexec_fn, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return None

    @staticmethod
    def describe(result):
        if result is None:
            return f"hung (no answer in {TIMEOUT} s)"
        if result.returncode < 0:
            return f"killed by {signal.Signals(-result.returncode).name}"
        last = result.stderr.strip().splitlines()[-1:] or [""]
        return f"exit {result.returncode}: {last[0][:110]}"

    # --- full disk -------------------------------------------------------
    def full_disk(self):
        mount_point = pathlib.Path(tempfile.mkdtemp(prefix="kiln-attack-disk-"))
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs",
                                  str(mount_point)], capture_output=True).returncode == 0
        try:
            if mounted:
                with open(mount_point / "filler", "wb") as filler:
                    try:
                        filler.write(b"\0" * (252 * 1024))
                    except OSError:
                        pass
            for emit in ("ptx", "module"):
                work = self.folder()
                source = work / "kernels.py"
                source.write_text(KERNELS)
                out = (mount_point if mounted else work) / f"out-{emit}"
                out.mkdir()
                args = ["build", source, "--emit", emit, "--module", "kernels",
                        "--ext-suffix", ".so", "-o", out, "--arch", "80;90"]
                environment = {**os.environ, "KILN_CACHE": "0"}
                if mounted:
                    result = self.run(*args, env=environment)
                    reason = "No space left on device"
                else:
                    def limit():
                        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))
                    result = self.run(*args, env=environment, preexec_fn=limit)
                    reason = "File too large"
                left = sorted(p.name for p in out.iterdir())
                ok = (result is not None and result.returncode == 1 and reason in result.stderr
                      and "LLVM ERROR" not in result.stderr and left == [])
                where = "a full tmpfs" if mounted else "a 1 KiB file size limit"
                self.report(f"build --emit {emit} onto {where}",
                            f"{self.describe(result)}; files left: {len(left)}",
                            f"exit 1, '{reason}', no files", ok)
            with open("/dev/full", "w") as full:
                work = self.folder()
                (work / "kernels.py").write_text(KERNELS)
                result = self.run("check", work / "kernels.py", stdout=full)
            self.report("check > /dev/full", self.describe(result),
                        "exit 1, 'standard output: No space left on device'",
                        result is not None and result.returncode == 1
                        and "standard output: No space left on device" in result.stderr)
        finally:
            if mounted:
                subprocess.run(["umount", str(mount_point)], check=True)
            mount_point.rmdir()

    # --- deep programs ---------------------------------------------------
    def deep_programs(self):
        cases = [
            ("device-function chain of 1,500", device_chain(1500), 1),
            ("device-function chain of 2,000", device_chain(2000), 1),
            ("device-function chain of 1,000", device_chain(1000), 0),
            ("flat sum of 999 terms", kernel_returning(" + ".join(["x"] * 999)), 0),
            ("flat sum of 2,989 terms (CPython's limit)",
             kernel_returning(" + ".join(["x"] * 2989)), 0),
            ("flat sum of 5,000 terms", kernel_returning(" + ".join(["x"] * 5000)), 1),
            ("x ** x ** ... of 100,000", kernel_returning(" ** ".join(["x"] * 100000)), 1),
        ]
        for what, source, expected in cases:
            path = self.folder() / "deep.py"
            path.write_text(source)
            result = self.run("check", path)
            located = expected == 0 or (result is not None and f"{path}:" in result.stderr)
            self.report(f"check, {what}", self.describe(result),
                        f"exit {expected}" + (", an error at file:line" if expected else ""),
                        result is not None and result.returncode == expected and located)

    # --- hangs -----------------------------------------------------------
    def hangs(self):
        work = self.folder()
        stuck = work / "stuck-python"
        stuck.write_text("#!/bin/sh\nsleep 1000 &\nwait\n")
        stuck.chmod(0o755)
        (work / "kernels.py").write_text(KERNELS)
        marker = new_marker()
        result = self.run("build", work / "kernels.py", "--module", "kernels", "-o", work / "out",
                          "--python", stuck,
                          env=marked_environment(marker, KILN_PYTHON_TIMEOUT="3", KILN_CACHE="0"))
        survivors = surviving_processes(marker)
        self.report("build --python <never answers>, KILN_PYTHON_TIMEOUT=3",
                    f"{self.describe(result)}; processes left: {len(survivors)}",
                    "exit 1 after 3 s, none left",
                    result is not None and result.returncode == 1 and not survivors)
        fifo = work / "fifo.py"
        os.mkfifo(fifo)
        for args in (["check", "/dev/zero"], ["check", fifo], ["build", fifo, "--emit", "ptx"],
                     ["signatures", "list", fifo], ["audit", fifo], ["inspect", "/dev/zero"],
                     ["cache", "import", fifo, "--cache-dir", work / "cache"]):
            result = self.run(*args)
            self.report(" ".join(map(str, args)).replace(str(work) + "/", ""),
                        self.describe(result), "exit 1, 'not a regular file'",
                        result is not None and result.returncode == 1
                        and "not a regular file" in result.stderr)

    # --- signals ---------------------------------------------------------
    def signals(self):
        leftover_total = survivor_total = 0
        for stop in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP) * 3:
            work = self.folder()
            source = work / "many.py"
            source.write_text(many_kernels())
            private_tmp = work / "tmp"
            private_tmp.mkdir()
            marker = new_marker()
            process = subprocess.Popen(
                [self.kiln, "build", str(source), "--emit", "fatbin", "-o", str(work / "out"),
                 "--arch", "all", "-j", "2"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                preexec_fn=default_stop_signals,
                env=marked_environment(marker, TMPDIR=str(private_tmp), KILN_CACHE="0"))
            running = wait_for_ptxas(marker, process)
            process.send_signal(stop)
            try:
                status = process.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                status = "hung"
            leftovers = list(private_tmp.rglob("*"))
            survivors = [p for p in live_processes(marker) if p[1] == "ptxas"]
            leftover_total += len(leftovers)
            survivor_total += len(survivors)
            self.report(f"{stop.name} during ptxas" + ("" if running else " (ptxas not seen)"),
                        f"status {status}, files left {len(leftovers)}, ptxas left "
                        f"{len(survivors)}", f"status {-stop}, 0, 0",
                        running and status == -stop and not leftovers and not survivors)
        print(f"      signals, 9 runs: {leftover_total} files left in TMPDIR, "
              f"{survivor_total} ptxas left running", flush=True)

    # --- usage errors ----------------------------------------------------
    def usage(self):
        work = self.folder()
        (work / "kernels.py").write_text(KERNELS)
        for args in (["build", work / "kernels.py", "--emit", "ptx", "-o", work, "--arch", "sm_12"],
                     ["targets", "--arch", "volta"],
                     ["cache", "prune", "--older-than", "soon", "--cache-dir", work / "cache"]):
            result = self.run(*args)
            self.report(" ".join(map(str, args)).replace(str(work) + "/", ""),
                        self.describe(result), "exit 2",
                        result is not None and result.returncode == 2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kiln", default=os.environ.get(
        "KILN", str(HERE.parent.parent / "build" / "driver" / "kiln")))
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kiln-attack-") as scratch:
        attack = Attack(options.kiln, scratch)
        for part in (attack.full_disk, attack.deep_programs, attack.hangs, attack.signals,
                     attack.usage):
            print(f"== {part.__name__.replace('_', ' ')}", flush=True)
            part()
    print(f"{attack.failures} broken promise(s)")
    return 1 if attack.failures else 0


if __name__ == "__main__":
    sys.exit(main())
