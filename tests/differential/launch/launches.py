"""Launches: the grid and block shapes programs draw from (1 to 3
dimensions, sizes that are no multiples of a warp, at most MAX_THREADS
threads), and every launch quantity over every thread of a launch."""

import dataclasses
import functools
import itertools

import numpy as np

from .expressions import Range
from .vocabulary import AXES

BLOCK_SHAPES = {1: [(7,), (33,), (45,), (64,), (1,), (100,), (32,), (96,), (128,), (250,)],
                2: [(5, 3), (8, 4), (3, 11), (16, 2), (1, 7), (33, 2), (2, 17), (32, 3)],
                3: [(4, 3, 2), (2, 2, 2), (3, 1, 5), (7, 2, 3), (2, 3, 4), (1, 5, 3), (9, 2, 2)]}
GRID_SHAPES = {1: [(1,), (3,), (5,), (2,), (4,), (6,)],
               2: [(2, 3), (1, 2), (3, 1), (2, 2), (1, 1), (3, 2)],
               3: [(2, 1, 2), (1, 2, 2), (2, 2, 2), (1, 1, 3), (1, 1, 1), (3, 1, 2)]}
MAX_THREADS = 1500


@dataclasses.dataclass(frozen=True)
class Launch:
    grid: tuple  # as launched: 1 to 3 dimensions
    block: tuple
    as_ints: bool  # a 1-D launch given as two ints

    def padded(self, shape):
        return tuple(shape) + (1,) * (3 - len(shape))

    @property
    def blocks(self):
        return int(np.prod(self.grid))

    @property
    def threads(self):
        return int(np.prod(self.block))

    def configuration(self):
        if self.as_ints:
            return self.grid[0], self.block[0]
        return tuple(self.grid), tuple(self.block)

    def points(self):
        """Every thread's (tid, ctaid) triples, in the order run_host runs
        them: block after block, x fastest in each."""
        gx, gy, gz = self.padded(self.grid)
        bx, by, bz = self.padded(self.block)
        for cz, cy, cx in itertools.product(range(gz), range(gy), range(gx)):
            for tz, ty, tx in itertools.product(range(bz), range(by), range(bx)):
                yield (tx, ty, tz), (cx, cy, cz)

    @functools.cached_property
    def environment(self):
        """Every launch quantity over every thread, as NumPy int64 arrays
        (the uniform ones as ints)."""
        points = list(self.points())
        tid = np.array([p[0] for p in points], np.int64).reshape(-1, 3)
        ctaid = np.array([p[1] for p in points], np.int64).reshape(-1, 3)
        ntid, nctaid = self.padded(self.block), self.padded(self.grid)
        env = {}
        for k, axis in enumerate(AXES):
            env[f"tid_{axis}"] = tid[:, k]
            env[f"ctaid_{axis}"] = ctaid[:, k]
            env[f"ntid_{axis}"] = ntid[k]
            env[f"nctaid_{axis}"] = nctaid[k]
            env[f"global_{axis}"] = ctaid[:, k] * ntid[k] + tid[:, k]
            env[f"gridsize_{axis}"] = ntid[k] * nctaid[k]
        env["lane"] = (tid[:, 0] + ntid[0] * (tid[:, 1] + ntid[1] * tid[:, 2])) % 32
        env["warpsize"] = 32
        env["thread"] = np.arange(len(points))
        return env

    def range_of(self, quantity):
        values = np.asarray(self.environment[quantity])
        return Range(int(values.min()), int(values.max()))
