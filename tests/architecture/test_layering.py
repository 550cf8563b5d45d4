"""The code's layers are the ones docs/architecture.md draws.

Each component folder's C and C++ sources may include headers of its own
folder and of the components the "Layers" table lists for it, nothing else.
The build enforces the same rule through per-library include roots; this
test keeps the documentation and the code from drifting apart, in both
directions: a use the code makes and the table lacks fails, and so does a
use the table lists that the code no longer makes.
"""

import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/', re.MULTILINE)


NAMESPACE_BLOCK = re.compile(r"^namespace (kiln[a-z_:]*) \{\n(.*?)^\} // namespace", re.MULTILINE | re.DOTALL)
FORWARD_DECLARATION = re.compile(r"^(class|struct|enum class) \w+;$")


def layer_rows():
    text = (REPO / "docs" / "architecture.md").read_text()
    table = text.split("<!-- layers -->")[1].split("<!-- end layers -->")[0]
    for row in table.strip().splitlines()[2:]:
        component, namespaces, uses = [cell.strip() for cell in row.strip("|").split("|")]
        yield component.strip("`"), namespaces, uses


def documented_layers():
    return {component: {use.strip(" `") for use in uses.split(",") if use.strip()}
            for component, _, uses in layer_rows()}


def documented_namespaces():
    return {component: set(re.findall(r"`(kiln[a-z_:]*)`", namespaces))
            for component, namespaces, _ in layer_rows()}


def declared_namespaces(component):
    """The namespaces the component's sources define something in (blocks of
    forward declarations alone name another component's types)."""
    found = {}
    for path in (REPO / component).rglob("*"):
        if path.suffix not in {".h", ".cpp", ".inc", ".def"}:
            continue
        for name, body in NAMESPACE_BLOCK.findall(path.read_text(errors="replace")):
            lines = [line.strip() for line in body.splitlines() if line.strip()]
            if not all(FORWARD_DECLARATION.match(line) for line in lines):
                found.setdefault(name, path.relative_to(REPO).as_posix())
    return found


def included_components(component):
    found = set()
    for path in (REPO / component).rglob("*"):
        if path.suffix in {".h", ".cpp", ".c", ".inc"}:
            found.update(INCLUDE.findall(path.read_text(errors="replace")))
    found.discard(component)
    return found


def test_every_component_folder_is_in_the_table():
    layers = documented_layers()
    folders = {p.name for p in REPO.iterdir() if (p / "CMakeLists.txt").exists()}
    folders -= {"tests", "cmake_modules", "examples"}
    assert folders == set(layers), f"folders {sorted(folders)} vs documented {sorted(layers)}"


def test_includes_match_the_documented_layers():
    for component, allowed in documented_layers().items():
        used = included_components(component)
        assert used <= allowed, f"{component} includes {sorted(used - allowed)}, which its layer may not use"
        assert allowed <= used, f"{component} is documented to use {sorted(allowed - used)}, but does not"


def test_each_component_declares_only_its_documented_namespaces():
    for component, allowed in documented_namespaces().items():
        for name, where in declared_namespaces(component).items():
            fits = name in allowed or any(
                name.startswith(parent + "::") for parent in allowed if parent != "kiln")
            assert fits, (f"{where} declares namespace {name}, which docs/architecture.md does not "
                          f"give {component} ({sorted(allowed)})")
