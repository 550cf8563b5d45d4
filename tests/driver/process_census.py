"""Finding the processes a kiln run started, through a marker in their
environment (children inherit it, whatever their process group or parent),
for tests that prove no tool outlives kiln."""

import os
import pathlib
import signal
import time
import uuid

MARKER_VARIABLE = "KILN_TEST_PROCESS_MARKER"


def new_marker():
    return uuid.uuid4().hex


def marked_environment(marker, **extra):
    environment = {**os.environ, MARKER_VARIABLE: marker}
    environment.update({name: value for name, value in extra.items() if value is not None})
    return environment


def live_processes(marker):
    """(pid, command name) of each running process, zombies aside, whose
    environment holds the marker."""
    needle = f"{MARKER_VARIABLE}={marker}".encode()
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environment = (entry / "environ").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if needle not in environment.split(b"\0"):
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        state = stat[stat.rindex(")") + 2]
        if state != "Z":
            found.append((int(entry.name), name))
    return found


def surviving_processes(marker, grace_seconds=10.0):
    """live_processes(marker) once they have had `grace_seconds` to go.
    Killing a tool's process group delivers SIGKILL to each of its
    processes on its own time: a grandchild may still be listed for a
    moment after kiln returns, on a busy machine. A process that outlives
    kiln is still listed when the grace is over."""
    deadline = time.monotonic() + grace_seconds
    while True:
        found = live_processes(marker)
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.05)


def default_stop_signals():
    """For preexec_fn: a test runner started in the background may ignore
    SIGINT, which kiln would then keep ignoring."""
    for stop in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(stop, signal.SIG_DFL)
