"""kiln._manifest is the runtime's one reader of a built module's manifest
(docs/abi.md, "The manifest, format 2"): no other module of the package
reads a key by its spelling, and what the reader gives for a real companion
build is what the manifest holds, with the runtime's defaults for absent
keys."""

import ast
import hashlib
import importlib.util
import pathlib
import sys

import pytest

from kiln import _manifest, _manifest_keys, _module_builds, _types, kernel

PACKAGE = pathlib.Path(__file__).resolve().parents[3] / "runtime" / "python" / "kiln"

# Keys whose spelling nothing but a manifest uses, so that reading one
# elsewhere in the package is reading the manifest behind the reader's back.
DISTINCTIVE_WORDS = {"sha256", "specializations", "cubins", "fatbin", "synchronizes"}

# (module, key): reads of the same spelling in something that is no manifest.
NOT_MANIFESTS = {
    ("cuda/context.py", "max_threads_per_block"),  # the device's attributes
}

SOURCE = '''
from kiln import cuda

TPB = 16
PAIR = (1, 2.5)


@cuda.jit("void(float32[::1], float32[::1], float32)", launch_bounds=(128,))
def scale(out, x, factor):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * factor


@cuda.jit("void(int32[:, ::1])")
def everyone(out):
    cuda.cg.this_grid().sync()
    out[0, 0] = 1
'''


def distinctive_keys():
    spellings = {value for holder in vars(_manifest_keys).values() if isinstance(holder, type)
                 for name, value in vars(holder).items() if name.isupper()}
    return {key for key in spellings if "_" in key or key in DISTINCTIVE_WORDS}


def key_reads(tree):
    """(line, key) of each string read as a key: `x["key"]`, `x.get("key",
    ...)` (or pop, setdefault), `"key" in x`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            key = node.slice
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("get", "pop", "setdefault") and node.args):
            key = node.args[0]
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            key = node.left
        else:
            continue
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            yield node.lineno, key.value


def test_only_the_reader_reads_manifest_keys_by_their_spelling():
    keys = distinctive_keys()
    assert {"arg_names", "static_shared_bytes", "local_bytes", "max_threads_per_block",
            "companion_of", "sha256", "kiln_version", "specializations"} <= keys
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module == "_manifest.py":
            continue
        for line, key in key_reads(ast.parse(path.read_text(), str(path))):
            if key in keys and (module, key) not in NOT_MANIFESTS:
                found.append(f"kiln/{module}:{line} reads {key!r}")
    assert not found, "read manifests through kiln._manifest:\n" + "\n".join(found)


def test_the_reader_spells_keys_only_through_the_generated_schema():
    path = PACKAGE / "_manifest.py"
    spelled = [f"line {line}: {key!r}" for line, key in key_reads(ast.parse(path.read_text(), str(path)))]
    assert not spelled, "kiln/_manifest.py spells keys:\n" + "\n".join(spelled)


@pytest.fixture(scope="module")
def companion(kiln, tmp_path_factory):
    """(folder, module, manifest) of a companion `kiln build` made."""
    folder = tmp_path_factory.mktemp("manifest_reader")
    (folder / "reader_kernels.py").write_text(SOURCE)
    result = kiln("build", "reader_kernels.py", "--arch", "80-virtual", "--python", sys.executable, cwd=folder)
    assert result.returncode == 0, result.stderr
    [path] = folder.glob("_reader_kernels.kiln.*")
    spec = importlib.util.spec_from_file_location("_reader_kernels_kiln", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return folder, module, module.__kiln_manifest__


def entry_of(manifest, name):
    [entry] = [entry for entry in manifest["specializations"] if entry["name"] == name]
    return entry


def test_what_the_reader_gives_of_a_companions_manifest(companion):
    folder, _, manifest = companion
    assert _manifest.companion_of(manifest) == "reader_kernels"
    digest = hashlib.sha256((folder / "reader_kernels.py").read_bytes()).hexdigest()
    sources = [_manifest.companion_source(item) for item in _manifest.companion_sources(manifest)]
    assert sources == [("reader_kernels.py", digest)]
    assert _module_builds._stale_source(str(folder), manifest) is None


def test_what_the_reader_gives_of_constants(companion):
    _, module, manifest = companion
    constants = [(_manifest.constant_name(c), _manifest.constant_type(c), _manifest.constant_value(c))
                 for c in manifest["constants"]]
    assert constants == [("PAIR", "Tuple(int64, float64)", [1, 2.5]), ("TPB", "int64", 16)]
    assert (module.PAIR, module.TPB) == ((1, 2.5), 16)


def test_what_the_reader_gives_of_a_specialization(companion):
    _, _, manifest = companion
    entry = entry_of(manifest, "scale")
    assert _manifest.argument_types(entry) == ["array(float32, 1d, C)", "array(float32, 1d, C)", "float32"]
    assert _manifest.argument_names(entry) == ["out", "x", "factor"]
    assert _manifest.entry_function(entry) == entry["entry"] and entry["entry"].startswith("_kiln_")
    assert _manifest.symbol(entry) == "reader_kernels.scale$0"
    parameters = _manifest.parameters(entry)
    assert len(parameters) == len(entry["params"]) == 7
    assert parameters[0] == (0, "data", 0, (), "ptr")
    assert parameters[-1] == (2, "value", 0, (), "f32")
    assert (_manifest.static_shared_bytes(entry), _manifest.local_bytes(entry)) == (0, 0)
    assert (_manifest.synchronizes(entry), _manifest.raises(entry), _manifest.cooperative(entry),
            _manifest.block_entry(entry)) == (False, False, False, True)
    assert _manifest.max_threads_per_block(entry) == 128
    assert (_manifest.cubin_archs(entry), _manifest.ptx_archs(entry)) == ([], [80])
    fatbin = entry["fatbin"]
    assert _manifest.fatbin_location(entry) == (fatbin["offset"], fatbin["size"], int(fatbin["checksum"], 16))
    assert _manifest.fatbin_bytes(entry) == fatbin["size"]

    grid_synced = entry_of(manifest, "everyone")
    assert (_manifest.synchronizes(grid_synced), _manifest.cooperative(grid_synced)) == (True, True)
    assert "max_threads_per_block" not in grid_synced and _manifest.max_threads_per_block(grid_synced) == 0
    assert (0, "shape", 1, (), "i64") in _manifest.parameters(grid_synced)


def test_kernels_read_their_entries_through_the_reader(companion):
    _, module, manifest = companion
    entry = entry_of(manifest, "scale")
    [member] = module.scale._members
    assert member[2] == entry, "the kernel's entry is the manifest's"
    assert kernel.specialization_tuple(None, 0, entry)[2:] == (
        "(array(float32, 1d, C), array(float32, 1d, C), float32)", entry["entry"],
        tuple(_types.descriptor(t) for t in entry["args"]), _manifest.parameters(entry),
        0, 0, False, False, 128, (), (80,), _manifest.fatbin_location(entry), _manifest.sites(entry),
        "checked")
    assert _manifest.sites(entry) and all("reader_kernels.py:" in site for site in _manifest.sites(entry))
    [info] = module.scale.info()
    assert info["args"] == entry["args"] and info["fatbin_bytes"] == entry["fatbin"]["size"]
    assert module.everyone.cooperative and not module.scale.cooperative


def test_absent_keys_read_as_the_runtime_always_read_them():
    assert _manifest.companion_of({}) is None
    assert _manifest.companion_sources({}) is None
    assert _manifest.companion_sources({"sources": []}) is None
    assert _manifest.companion_source({"file": 3}) is None
    assert _manifest.companion_source({"file": "k.py"}) == ("k.py", None)
    assert _manifest.constant_type({}) == ""
    assert _manifest.argument_names({}) is None and _manifest.symbol({}) is None
    assert (_manifest.static_shared_bytes({}), _manifest.local_bytes({}),
            _manifest.max_threads_per_block({})) == (0, 0, 0)
    assert not any(read({}) for read in (_manifest.synchronizes, _manifest.raises,
                                         _manifest.cooperative, _manifest.block_entry))
    assert (_manifest.cubin_archs({}), _manifest.ptx_archs({}), _manifest.sites({})) == ((), (), ())
    assert _manifest.fatbin_location({}) is None
    assert _manifest.index_checks({}) == "both", "modules of earlier builds hold both copies"
    assert _manifest.fatbin_bytes({}) is None and _manifest.fatbin_bytes({"fatbin": None}) is None
    assert _manifest.parameters({"params": [{"argument": 1, "role": "value", "type": "f32"}]}) == (
        (1, "value", 0, (), "f32"),)
    with pytest.raises(KeyError, match="args"):
        _manifest.argument_types({})
