# RUN: %kiln build %s --emit typed -o %t 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
# RUN: FileCheck %s < %t/enum_members.typed
#
# Members of module-level enum classes are constants frozen into the kernel,
# as Numba freezes them: `Color.BLUE` (an IntEnum member, usable in integer
# arithmetic), `Mode.TRIPLE.value`, members numbered by enum.auto(). The
# import of enum is no ignored import.
import enum
from enum import IntEnum, auto

from numba import cuda


class Color(IntEnum):
    RED = 1
    GREEN = 2
    BLUE = auto()


class Mode(enum.Enum):
    """How to scale."""

    DOUBLE = 2
    TRIPLE = 3.5


@cuda.jit("void(float64[::1])")
def paint(out):
    out[0] = Color.BLUE * 10 + Mode.TRIPLE.value + Color.RED.value

# QUIET-NOT: warning
# CHECK-LABEL: kernel @enum_members.paint$0
# CHECK:      [[BLUE:%[0-9]+]] = mul 3:int64, 10:int64 : int64
# CHECK-NEXT: [[WIDE:%[0-9]+]] = cast [[BLUE]] : float64
# CHECK-NEXT: [[SUM:%[0-9]+]] = add [[WIDE]], 3.5:float64 : float64
# CHECK-NEXT: add [[SUM]], 1:float64 : float64
