"""`numba.cuda.cudadrv.devices`: the device list and its context."""

from ..context import close as reset
from ..context import current_context as get_context
from ..context import gpus, require_context

__all__ = ["get_context", "gpus", "require_context", "reset"]
