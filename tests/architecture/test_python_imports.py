"""The runtime's Python package imports one way: no module of `kiln`
imports, at its top or inside a function, a module that imports it back
(directly or through others), so that each can be read, and loaded, after
the ones it builds on. A module is a script only where it says so in its
name (kiln.__main__, kiln.import_host_values)."""

import ast
import pathlib

PACKAGE_ROOT = pathlib.Path(__file__).resolve().parents[2] / "runtime" / "python"
SCRIPTS = {"kiln.__main__", "kiln.import_host_values"}


def _modules():
    """{dotted name: (path, whether it is a package's __init__)}."""
    modules = {}
    for path in sorted((PACKAGE_ROOT / "kiln").rglob("*.py")):
        parts = list(path.relative_to(PACKAGE_ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        modules[".".join(parts)] = (path, is_package)
    return modules


def _imported(module, is_package, node):
    """The dotted names an import statement of `module` names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = module.split(".") if is_package else module.split(".")[:-1]
    if node.level:
        base = base[:len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    return [f"{target}.{alias.name}" for alias in node.names] + [target]


def import_graph():
    """{module: the package's modules it imports}. `from kiln import x`
    names the module kiln.x where there is one; the C extensions
    (kiln._runtime, kiln._compiler) are leaves, not the package."""
    modules = _modules()
    graph = {}
    for module, (path, is_package) in modules.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            names = _imported(module, is_package, node)
            submodules = [name for name in names if name in modules and name != module]
            if isinstance(node, ast.ImportFrom):
                # The package itself only where a name is no submodule of it.
                package = names[-1]
                named = [f"{package}.{alias.name}" for alias in node.names]
                if all(name in modules or name.rpartition(".")[2].startswith("_") for name in named):
                    submodules = [name for name in submodules if name != package]
            edges.update(submodules)
        graph[module] = edges
    return graph


def _cycle(graph):
    """One import cycle of `graph`, as a list of modules, or None."""
    state = {}

    def visit(module, path):
        state[module] = "open"
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                return path[path.index(imported):] + [imported]
            if imported not in state:
                found = visit(imported, path + [imported])
                if found:
                    return found
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module, [module])
            if found:
                return found
    return None


def test_the_package_imports_one_way():
    cycle = _cycle(import_graph())
    assert cycle is None, "kiln's modules import each other in a cycle: " + " -> ".join(cycle)


def test_the_import_graph_sees_imports_inside_functions():
    graph = import_graph()
    assert "kiln.decorators" in graph["kiln"], \
        "kiln/__init__.py imports kiln.decorators inside __getattr__; the graph must see it"
    assert "kiln.cuda.devicearray" in graph["kiln.ufunc"]


def test_only_scripts_run_as_scripts():
    for module, (path, _) in _modules().items():
        if module in SCRIPTS:
            continue
        source = path.read_text()
        assert 'if __name__ == "__main__"' not in source, \
            f"{path.relative_to(PACKAGE_ROOT)} is also a script; give the script a module of its own"
