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


def documented_layers():
    text = (REPO / "docs" / "architecture.md").read_text()
    table = text.split("<!-- layers -->")[1].split("<!-- end layers -->")[0]
    layers = {}
    for row in table.strip().splitlines()[2:]:
        component, uses = [cell.strip() for cell in row.strip("|").split("|")]
        layers[component.strip("`")] = {use.strip(" `") for use in uses.split(",") if use.strip()}
    return layers


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
