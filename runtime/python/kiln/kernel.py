"""Kernel objects of built modules: `kiln.kernel.Kernel`.

A Kernel is the C dispatcher (kiln._runtime.Dispatcher) over the compiled
specializations of one kernel, plus the Python conveniences of Numba's CUDA
dispatcher:

    kernel[griddim, blockdim](*args)                    # launch
    kernel[griddim, blockdim, stream, sharedmem](*args)
    kernel.forall(n)(*args)                             # one thread per element
    kernel.signatures                                   # ['(array(float32, 1d, C), ...)', ...]
    kernel.overloads[(float32[:], int64)]               # one specialization alone
    kernel.info()                                       # per specialization
"""

import json

from kiln import _manifest, _runtime, _types

# Numba picks forall's block size by occupancy; Kiln has no occupancy
# calculator, so it uses this (or fewer threads, for tiny n).
FORALL_BLOCK = 128


def entry_signature(entry):
    """'(array(float32, 1d, C), int64)': a manifest entry's argument types."""
    return _types.signature_text(_manifest.argument_types(entry))


def signature_key(key):
    """The signature text a key of `overloads` names: the text itself, or a
    tuple of Numba types (`(int32[:, ::1],)`), as Numba's dispatcher keys its
    overloads."""
    if isinstance(key, str):
        return key
    if isinstance(key, tuple):
        return _types.signature_text([str(t) for t in key])
    raise TypeError(f"overloads are keyed by argument types (a tuple of Numba types) or their "
                    f"signature text, not {type(key).__name__}")


class Overloads(dict):
    """Signature text -> a kernel object holding that specialization alone
    (Numba's `dispatcher.overloads`), also indexed by a tuple of types."""

    def __getitem__(self, key):
        return super().__getitem__(signature_key(key))

    def __contains__(self, key):
        return super().__contains__(signature_key(key))

    def get(self, key, default=None):
        return super().get(signature_key(key), default)


def specialization_tuple(image, index, entry):
    """What kiln._runtime.Dispatcher takes for one specialization."""
    return (
        image,
        index,
        entry_signature(entry),
        _manifest.entry_function(entry),
        tuple(_types.descriptor(t) for t in _manifest.argument_types(entry)),
        _manifest.parameters(entry),
        int(_manifest.static_shared_bytes(entry)),
        int(_manifest.local_bytes(entry)),
        bool(_manifest.raises(entry)),
        bool(_manifest.cooperative(entry)),
        int(_manifest.max_threads_per_block(entry)),
        tuple(_manifest.cubin_archs(entry)),
        tuple(_manifest.ptx_archs(entry)),
        _manifest.fatbin_location(entry),
        _manifest.sites(entry),
        _manifest.index_checks(entry),
    )


class Kernel(_runtime.Dispatcher):
    """A compiled kernel: `kernel[griddim, blockdim, stream, sharedmem](*args)`.

    `specializations` is a list of (image, index, manifest entry): the
    ModuleImage holding the code (None: none, for tests), the entry's row in
    its tables, and the entry's manifest dict. With `exact`, a call is
    dispatched only to a specialization of its own argument types (see
    kiln.dispatcher.LazyKernel); `arity` is the number of arguments when
    there are no specializations yet.
    """

    def __init__(self, name, specializations, arg_names=None, module=None, exact=False, arity=0):
        self._members = list(specializations)
        self._module_name = module
        super().__init__(
            name,
            [specialization_tuple(image, index, entry) for image, index, entry in self._members],
            arg_names,
            exact=exact,
            arity=arity,
        )

    @classmethod
    def from_image(cls, name, image, indices, module):
        """The kernel of specializations `indices` of a module's ModuleImage,
        whose manifest entries are parsed at its first use (a launch, or
        asking for its signatures): an import then costs the same whatever
        the number of kernels."""
        kernel = cls.__new__(cls)
        kernel._image = image
        kernel._indices = tuple(indices)
        kernel._module_name = module
        _runtime.Dispatcher.__init__(kernel, name, kernel._read_specializations)
        return kernel

    def _read_specializations(self):
        """(specialization tuples, arg_names) for the C dispatcher's first use."""
        members = self._members
        arg_names = _manifest.argument_names(members[0][2]) if members else None
        return [specialization_tuple(*member) for member in members], arg_names

    @property
    def _members(self):
        members = self.__dict__.get("_member_list")
        if members is None:
            image = self._image
            members = [(image, index, json.loads(image.entry(index))) for index in self._indices]
            self.__dict__["_member_list"] = members
        return members

    @_members.setter
    def _members(self, members):
        self.__dict__["_member_list"] = list(members)

    @property
    def _entries(self):
        return [entry for _, _, entry in self._members]

    @property
    def signatures(self):
        """The compiled argument types, one string per specialization."""
        return [entry_signature(entry) for entry in self._entries]

    @property
    def py_func(self):
        return None

    def info(self):
        """One dict per specialization: signature, entry, archs, shared/local memory."""
        return [
            {
                "signature": entry_signature(entry),
                "args": list(_manifest.argument_types(entry)),
                "entry": _manifest.entry_function(entry),
                "symbol": _manifest.symbol(entry),
                "cubins": list(_manifest.cubin_archs(entry)),
                "ptx": list(_manifest.ptx_archs(entry)),
                "static_shared_bytes": _manifest.static_shared_bytes(entry),
                "local_bytes": _manifest.local_bytes(entry),
                "synchronizes": _manifest.synchronizes(entry),
                "raises": _manifest.raises(entry),
                "cooperative": _manifest.cooperative(entry),
                "block_entry": _manifest.block_entry(entry),
                "index_checks": _manifest.index_checks(entry),
                "fatbin_bytes": _manifest.fatbin_bytes(entry),
            }
            for entry in self._entries
        ]

    def inspect_types(self):
        """Prints each specialization's signature (Numba prints typed IR)."""
        for entry in self._entries:
            print(f"{self.__name__} {entry_signature(entry)}")

    @property
    def overloads(self):
        """Signature -> a kernel object holding that specialization alone."""
        return Overloads({entry_signature(member[2]): self._alone(member) for member in self._members})

    def _alone(self, member):
        return Kernel(self.__name__, [member], _manifest.argument_names(member[2]), self._module_name)

    @property
    def cooperative(self):
        """Whether the kernel asks for the grid group (cuda.cg.this_grid(),
        whose sync() waits for the whole grid): it is then launched
        cooperatively, every block of the grid resident at once."""
        return any(_manifest.cooperative(entry) for entry in self._entries)

    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0):
        """The most blocks of `blockdim` threads (an int or a tuple), each
        with `dynsmemsize` bytes of dynamic shared memory, that a cooperative
        launch of the kernel may have: as many as the device keeps resident
        at once. Asked of one specialization (`overloads[sig]`)."""
        if len(self._members) != 1:
            raise TypeError(f"kernel '{self.__name__}' has {len(self._members)} specializations; "
                            "ask max_cooperative_grid_blocks() of one: kernel.overloads[signature]")
        dims = tuple(blockdim) if isinstance(blockdim, (tuple, list)) else (blockdim,)
        threads = 1
        for dim in dims:
            threads *= int(dim)
        return self._max_cooperative_grid_blocks(0, threads, int(dynsmemsize))

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """A launch with at least `ntasks` threads: kernel.forall(n)(*args)."""
        ntasks = int(ntasks)
        if ntasks < 0:
            raise ValueError(f"kernel '{self.__name__}': Can't create ForAll with negative task count "
                             f"{ntasks}")
        block = int(tpb) if tpb else FORALL_BLOCK
        block = max(1, min(block, ntasks)) if ntasks else 1
        grid = max(1, -(-ntasks // block))
        return self[grid, block, stream, sharedmem]

    def __repr__(self):
        where = f" of module '{self._module_name}'" if self._module_name else ""
        count = len(self._entries)
        plural = "" if count == 1 else "s"
        return f"<kiln kernel '{self.__name__}'{where}: {count} specialization{plural} {', '.join(self.signatures)}>"
