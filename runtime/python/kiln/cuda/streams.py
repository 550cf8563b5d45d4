"""Streams and events (`numba.cuda` `stream()`, `event()` and friends).

Streams are named by integer handles, as the target sees them: 0 is the
default stream, 1 the legacy default stream and 2 the per-thread default
stream (CUDA's CU_STREAM_LEGACY and CU_STREAM_PER_THREAD).
"""

import contextlib

from kiln import _runtime

__all__ = [
    "Stream",
    "Event",
    "stream",
    "default_stream",
    "legacy_default_stream",
    "per_thread_default_stream",
    "external_stream",
    "event",
    "event_elapsed_time",
    "stream_handle",
]

LEGACY_DEFAULT_STREAM = 1
PER_THREAD_DEFAULT_STREAM = 2


def stream_handle(stream):
    """The integer handle of 0/None, an int handle, or a stream object."""
    if not stream:
        return 0
    if isinstance(stream, int):
        return stream
    handle = getattr(stream, "handle", None)
    if handle is None:
        raise TypeError(f"expected a stream (kiln.cuda.stream()), an int handle or 0, not {type(stream).__name__}")
    return int(handle)


def _synchronize_handle(handle):
    if handle == 0:
        _runtime.synchronize()
    else:
        _runtime.Stream.wrap(handle).synchronize()


class Stream:
    """A stream: a queue of device work (`numba.cuda.cudadrv.driver.Stream`).

    Pass it as the third launch parameter (`kernel[grid, block, stream]`) or
    as `stream=` to copies.
    """

    __slots__ = ("_stream", "_handle", "_kind")

    def __init__(self, runtime_stream=None, handle=None, kind="stream"):
        self._stream = runtime_stream
        self._handle = int(runtime_stream.handle) if runtime_stream is not None else int(handle)
        self._kind = kind

    @property
    def handle(self):
        return self._handle

    def __int__(self):
        return self._handle

    def __index__(self):
        return self._handle

    def __eq__(self, other):
        if isinstance(other, Stream):
            return self._handle == other._handle
        return NotImplemented

    def __hash__(self):
        return hash(self._handle)

    def __repr__(self):
        names = {"default": "Default CUDA stream", "legacy": "Legacy default CUDA stream",
                 "per_thread": "Per-thread default CUDA stream"}
        if self._kind in names:
            return f"<{names[self._kind]} on {_runtime.target()} target>"
        if self._kind == "external":
            return f"<External CUDA stream {self._handle:#x}>"
        return f"<CUDA stream {self._handle:#x}>"

    def synchronize(self):
        """Wait for all work queued on this stream to finish."""
        if self._stream is not None:
            self._stream.synchronize()
        else:
            _synchronize_handle(self._handle)

    def query(self):
        """True if all work queued on this stream has finished."""
        if self._stream is not None:
            return bool(self._stream.query())
        try:
            return bool(_runtime.Stream.wrap(self._handle).query())
        except (ValueError, TypeError):
            # A target that cannot wrap this handle: wait instead.
            _synchronize_handle(self._handle)
            return True

    @contextlib.contextmanager
    def auto_synchronize(self):
        """Context manager that synchronizes this stream on exit."""
        yield self
        self.synchronize()


def stream():
    """A new stream."""
    return Stream(_runtime.Stream())


def default_stream():
    """The default stream (handle 0)."""
    return Stream(handle=0, kind="default")


def legacy_default_stream():
    """The legacy default stream (CU_STREAM_LEGACY)."""
    return Stream(handle=LEGACY_DEFAULT_STREAM, kind="legacy")


def per_thread_default_stream():
    """The per-thread default stream (CU_STREAM_PER_THREAD)."""
    return Stream(handle=PER_THREAD_DEFAULT_STREAM, kind="per_thread")


def external_stream(ptr):
    """Wrap a stream made elsewhere (a CUstream as an int); it is not destroyed."""
    if not isinstance(ptr, int):
        ptr = int(ptr)
    return Stream(_runtime.Stream.wrap(ptr), kind="external")


class Event:
    """A device event (`numba.cuda.cudadrv.driver.Event`)."""

    __slots__ = ("_event", "timing")

    def __init__(self, timing=True):
        self._event = _runtime.Event(timing)
        self.timing = timing

    @property
    def handle(self):
        return getattr(self._event, "handle", None)

    def record(self, stream=0):
        """Record the event on `stream`: it completes when the work queued so far does."""
        self._event.record(stream_handle(stream))

    def synchronize(self):
        """Wait until the event has completed."""
        self._event.synchronize()

    def query(self):
        """True if the event has completed."""
        return bool(self._event.query())

    def wait(self, stream=0):
        """Make `stream` wait for this event.

        Kiln's runtime has no stream-wait primitive; this waits on the host
        instead (stronger, same ordering guarantee).
        """
        self._event.synchronize()

    def elapsed_time(self, evtend):
        """Milliseconds between this event and `evtend` (both recorded and completed)."""
        return self._event.elapsed_time(evtend._event)

    def __repr__(self):
        return f"<kiln.cuda.Event timing={self.timing}>"


def event(timing=True):
    """A new event; `timing=False` ones cannot measure elapsed time."""
    return Event(timing)


def event_elapsed_time(evtstart, evtend):
    """Milliseconds between two recorded events."""
    return evtstart.elapsed_time(evtend)
