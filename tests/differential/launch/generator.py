"""The generator: one program from a seed, the same on every machine.

Generator holds the program being built (its launch, statements, arrays,
scalars and device functions, and a StoreTracer that follows every
statement emitted), draws the launch and puts the program together; what
goes into the kernel its mixins draw: launch indices
(generate_indices.py), arrays (generate_arrays.py), values
(generate_values.py) and stores (generate_stores.py)."""

import itertools
import random

import numpy as np

from .coverage import focus_cells
from .expressions import DeviceFunction
from .generate_arrays import ArrayGeneration
from .generate_indices import LaunchIndexGeneration
from .generate_stores import StoreGeneration
from .generate_values import ValueGeneration
from .launches import BLOCK_SHAPES, GRID_SHAPES, MAX_THREADS, Launch
from .program import Program
from .tracer import StoreTracer
from .vocabulary import AXES, DTYPES, FORMS, INTRINSICS, LAYOUTS

# Where a focus cell names an intrinsic of the y or z axis, most programs
# launch that many dimensions, so that the intrinsic takes more than one
# value.
HONOUR_AXES_SHARE = 0.7
EXTRA_PLANS = (0, 3)
# Some programs are plain, so that Numba's simulator can judge them too:
# values of int64, float64, bool and complex128 only (and launch indices),
# contiguous arrays, no structured ones; most of them one block. A program
# is plain where its focus cells allow (no record, no strided view).
PLAIN_SHARE = 0.6


class Generator(LaunchIndexGeneration, ArrayGeneration, ValueGeneration, StoreGeneration):
    """Builds one program from a seed; the same seed gives the same program
    on every machine. What __init__ sets is the state its mixins share."""

    def __init__(self, seed):
        self.seed = seed
        self.random = random.Random(seed)
        self.focus = focus_cells(seed)
        self.plain = random.Random(f"plain {seed}").random() < PLAIN_SHARE and \
            not any(layout in ("record", "strided view") for _, _, layout, _ in self.focus)
        self.launch = self.choose_launch()
        self.tracer = StoreTracer(self.launch)
        self.statements = []
        self.arrays = []
        self.scalars = []
        self.devices = []
        self.names = itertools.count()
        self.bound = {}  # (intrinsic, component) -> [Var], bound at the top level
        self.device_parameters = None  # while a device function's body is built
        self.loop_indices = []  # the loop index of the grid-stride loop being built

    # The launch.

    def choose_launch(self):
        r = self.random
        block_needs, grid_needs, either_needs = 1, 1, 1
        # The axes of one focus cell (of all four, nearly every launch would
        # have three dimensions).
        intrinsic = r.choice(self.focus)[0]
        if r.random() < HONOUR_AXES_SHARE:
            for quantity in INTRINSICS[intrinsic].quantities:
                dims = AXES.index(quantity[-1]) + 1 if quantity[-1] in AXES else 1
                if quantity.startswith(("tid", "ntid")):
                    block_needs = max(block_needs, dims)
                elif quantity.startswith(("ctaid", "nctaid")):
                    grid_needs = max(grid_needs, dims)
                else:
                    either_needs = max(either_needs, dims)
        block_dims, grid_dims = r.choice([1, 1, 1, 2, 3]), r.choice([1, 1, 1, 2, 3])
        block_dims, grid_dims = max(block_dims, block_needs), max(grid_dims, grid_needs)
        if max(block_dims, grid_dims) < either_needs:
            if r.random() < 0.5:
                block_dims = either_needs
            else:
                grid_dims = either_needs
        while True:
            block, grid = r.choice(BLOCK_SHAPES[block_dims]), r.choice(GRID_SHAPES[grid_dims])
            if self.plain and r.random() < 0.5:
                grid = (1,) * grid_dims  # the simulator runs a block's threads as Python threads
            if np.prod(block) * np.prod(grid) <= MAX_THREADS:
                break
        return Launch(grid, block, as_ints=block_dims == grid_dims == 1 and r.random() < 0.5)

    # Emitting statements.

    def emit(self, statement):
        self.statements.append(statement)
        self.tracer.run([statement])

    def fresh(self, prefix="v"):
        return f"{prefix}{next(self.names)}"

    def new_device(self, parameters, body=None):
        function = DeviceFunction(f"d{len(self.devices)}", parameters, body)
        self.devices.append(function)
        return function

    # The program.

    def program(self):
        r = self.random
        cells = list(self.focus)
        for _ in range(r.randint(*EXTRA_PLANS)):
            layouts = ["C", "F", "A", "0-d"] if self.plain else LAYOUTS
            intrinsic, dtype, layout, form = (r.choice(list(INTRINSICS)), r.choice(DTYPES), r.choice(layouts),
                                              r.choice(FORMS))
            cells.append((intrinsic, dtype, layout, "value" if layout == "0-d" and form == "index" else form))
        r.shuffle(cells)
        for cell in cells:
            self.store_plan(cell)
        parameters = self.arrays + self.scalars
        r.shuffle(parameters)
        program = Program(self.seed, self.launch, parameters, self.devices, self.statements, self.focus)
        return program


def generate(seed):
    """The program of `seed`."""
    return Generator(seed).program()
