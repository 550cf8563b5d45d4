"""The one reader of a built module's manifest (docs/abi.md, "The manifest,
format 2"): the rest of the package asks it for what it needs of a manifest,
of a constant or of a specialization's entry, and spells no key itself.

Keys are spelled only in kiln._manifest_keys, which the build generates from
the schema the C++ writer and reader include (module/manifest_keys.def), so
that the writer and every reader agree on them. Each function gives a value
as the manifest holds it, with the runtime's default where a key may be
absent; callers convert it.
"""

from kiln._manifest_keys import CompanionSource, Constant, Fatbin, Manifest, Parameter, Specialization

# The whole manifest.


def companion_of(manifest):
    """The module a companion was built for ("pkg.kernels"), or None where
    the manifest is not a companion's."""
    return manifest.get(Manifest.COMPANION_OF)


def companion_sources(manifest):
    """The list of the source files a companion was built from, or None
    where it is missing, empty or no list."""
    sources = manifest.get(Manifest.SOURCES)
    if not isinstance(sources, list) or not sources:
        return None
    return sources


def companion_source(item):
    """(file, sha256) of an item of companion_sources(): the file's path from
    the module's folder and the SHA-256 of its bytes (None if missing); None
    where the item names no file."""
    if not isinstance(item, dict) or not isinstance(item.get(CompanionSource.FILE), str):
        return None
    return item[CompanionSource.FILE], item.get(CompanionSource.SHA256)


# An item of the manifest's constants.


def constant_name(constant):
    return constant[Constant.NAME]


def constant_type(constant):
    """Numba's typeof of the value ("int64", "UniTuple(float64 x 2)"), or ""."""
    return constant.get(Constant.TYPE, "")


def constant_value(constant):
    """The value as JSON spells it (see kiln._loader for what it stands for)."""
    return constant[Constant.VALUE]


# A specialization's entry.


def argument_types(entry):
    """The argument types, as Numba prints them ("array(float32, 1d, C)")."""
    return entry[Specialization.ARGS]


def argument_names(entry):
    """The kernel's Python parameter names, one per argument, or None."""
    return entry.get(Specialization.ARG_NAMES)


def entry_function(entry):
    """The name of the specialization's entry function in its images."""
    return entry[Specialization.ENTRY]


def symbol(entry):
    return entry.get(Specialization.SYMBOL)


def parameters(entry):
    """The entry function's parameters, each (argument, role, dimension, path,
    type): which argument it is made from, and what of it (docs/abi.md)."""
    return tuple(
        (p[Parameter.ARGUMENT], p[Parameter.ROLE], p.get(Parameter.DIMENSION, 0),
         tuple(p.get(Parameter.PATH, ())), p[Parameter.TYPE])
        for p in entry[Specialization.PARAMS]
    )


def static_shared_bytes(entry):
    return entry.get(Specialization.STATIC_SHARED_BYTES, 0)


def local_bytes(entry):
    return entry.get(Specialization.LOCAL_BYTES, 0)


def synchronizes(entry):
    return entry.get(Specialization.SYNCHRONIZES, False)


def raises(entry):
    return entry.get(Specialization.RAISES, False)


def cooperative(entry):
    """Whether the kernel syncs the grid, and must be launched cooperatively."""
    return entry.get(Specialization.COOPERATIVE, False)


def block_entry(entry):
    return entry.get(Specialization.BLOCK_ENTRY, False)


def index_checks(entry):
    """Which copies of the kernel's body its host code holds: "checked",
    "unchecked" or "both" (modules of earlier builds say nothing: both)."""
    return entry.get(Specialization.INDEX_CHECKS) or "both"


def sites(entry):
    """"file:line" of each operation the host code's messages name, by the
    index the code passes (the code itself holds no source positions)."""
    return tuple(entry.get(Specialization.SITES, ()))


def max_threads_per_block(entry):
    """The kernel's first launch bound, or 0 where it has none."""
    return entry.get(Specialization.MAX_THREADS_PER_BLOCK, 0)


def cubin_archs(entry):
    """The architectures (75, 80, ...) the specialization has cubins for."""
    return entry.get(Specialization.CUBINS, ())


def ptx_archs(entry):
    """The architectures the specialization has PTX for."""
    return entry.get(Specialization.PTX, ())


def fatbin_location(entry):
    """(offset, size, checksum) of the specialization's fat binary in the
    payload, as ints, or None outside built modules."""
    fatbin = entry.get(Specialization.FATBIN)
    if fatbin is None:
        return None
    return int(fatbin[Fatbin.OFFSET]), int(fatbin[Fatbin.SIZE]), int(fatbin[Fatbin.CHECKSUM], 16)


def fatbin_bytes(entry):
    """The size of the specialization's fat binary, or None where it has none."""
    return (entry.get(Specialization.FATBIN) or {}).get(Fatbin.SIZE)
