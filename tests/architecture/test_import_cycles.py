"""No import circle between the project's modules and no private name taken from another module.

Every project module's imports are read with ``ast`` (top-level and inside functions alike, since
an import inside a function only hides a circle, it does not remove one). ``from a.b import c``
points at the module ``a.b.c`` when that is a module, else at ``a.b``; a package's ``__init__``
counts as the module ``a.b``. A circle is reported with its modules in order and the import (file
and line) that closes it; a private name (``_x``, not a dunder) is reported where it is imported
or read as an attribute of an imported project module.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("skipbo_env", "agents", "evaluation", "training", "skipbo_cli", "skipbo_web", "tests", "benchmarks",
            "examples")
"""Every folder of Python code in the project (the tests, benchmarks and examples too: they may not take a
private name either)."""
@dataclass(frozen=True)
class Edge:
    """One import: ``source`` imports ``target`` at ``where`` (path:line)."""

    source: str
    target: str
    where: str


def module_files(root: Path, packages=PACKAGES) -> dict[str, Path]:
    """Every module of ``packages`` under ``root``, by dotted name (a package's ``__init__`` is
    the package itself)."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def absolute_module(node: ast.ImportFrom, module: str, path: Path) -> str:
    """The module ``from ... import`` names, with a relative import resolved against ``module``."""
    if not node.level:
        return node.module
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def dotted_name(node) -> str | None:
    """``"a.b.c"`` for the expression ``a.b.c`` (names and attributes only), else ``None``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def read_imports(module: str, path: Path, modules: dict[str, Path], root: Path):
    """The module's edges to other project modules and the private names it takes from them."""
    tree = ast.parse(path.read_text(), filename=str(path))
    relative = path.relative_to(root)
    edges, private = [], []
    module_aliases = {}  # a local name bound to a project module -> that module
    for node in ast.walk(tree):
        where = f"{relative}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    edges.append(Edge(module, alias.name, where))
                    if alias.asname:
                        module_aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            source = absolute_module(node, module, path)
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in modules:
                    edges.append(Edge(module, submodule, where))
                    module_aliases[alias.asname or alias.name] = submodule
                elif source in modules:
                    edges.append(Edge(module, source, where))
                    if is_private(alias.name) and source != module:
                        private.append(f"{where}: {module} imports {alias.name} from {source}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            owner = dotted_name(node.value)
            owner = module_aliases.get(owner, owner)
            if owner in modules and owner != module:
                private.append(f"{relative}:{node.lineno}: {module} reads {node.attr} from {owner}")
    return list(dict.fromkeys(edge for edge in edges if edge.target != module)), private


def import_graph(root: Path = ROOT, packages=PACKAGES):
    """(edges by source module, private-name findings) for every module under ``root``."""
    modules = module_files(root, packages)
    graph, private = {}, []
    for module, path in modules.items():
        edges, found = read_imports(module, path, modules, root)
        graph[module] = edges
        private += found
    return graph, sorted(private)


def strongly_connected(graph: dict[str, list[Edge]]) -> list[list[str]]:
    """Tarjan's components of more than one module (each a set of modules that import in a circle)."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(start):
        work = [(start, iter(graph.get(start, ())))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for edge in edges:
                if edge.target not in index:
                    index[edge.target] = low[edge.target] = len(index)
                    stack.append(edge.target)
                    on_stack.add(edge.target)
                    work.append((edge.target, iter(graph.get(edge.target, ()))))
                    break
                if edge.target in on_stack:
                    low[node] = min(low[node], index[edge.target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(components)


def one_circle(graph: dict[str, list[Edge]], component: list[str]) -> list[Edge]:
    """A shortest circle through the component's first module, as the edges that make it."""
    members, start = set(component), component[0]
    came_by = {start: None}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for edge in graph.get(node, ()):
                if edge.target == start:
                    path = [edge]
                    while came_by[edge.source] is not None:
                        edge = came_by[edge.source]
                        path.append(edge)
                    return path[::-1]
                if edge.target in members and edge.target not in came_by:
                    came_by[edge.target] = edge
                    following.append(edge.target)
        frontier = following
    raise AssertionError(f"no circle found in component {component}")


def describe_circle(circle: list[Edge], component: list[str]) -> str:
    """The circle's modules in order, the import that closes it, every import of it, and (when
    more modules import each other in circles) all the modules caught up in it."""
    modules = " -> ".join([edge.source for edge in circle] + [circle[0].source])
    imports = "; ".join(f"{edge.where} ({edge.source} imports {edge.target})" for edge in circle)
    closing = circle[-1]
    text = (f"import circle {modules}, closed by {closing.where} "
            f"({closing.source} imports {closing.target}); its imports: {imports}")
    if len(component) > len(circle):
        text += f"; {len(component)} modules in circles with it: {', '.join(component)}"
    return text


def import_circles(root: Path = ROOT, packages=PACKAGES) -> list[str]:
    graph, _ = import_graph(root, packages)
    return [describe_circle(one_circle(graph, component), component)
            for component in strongly_connected(graph)]


def private_imports(root: Path = ROOT, packages=PACKAGES) -> list[str]:
    return import_graph(root, packages)[1]


def test_no_import_circle_between_modules():
    circles = import_circles()
    assert not circles, "\n".join(circles)


def test_no_private_name_is_imported_from_another_module():
    found = private_imports()
    assert not found, "\n".join(found)


def plant(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_check_sees_a_circle_closed_inside_a_function(tmp_path):
    plant(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg.b import g\n",
        "pkg/b.py": "import pkg.c\n",
        "pkg/c.py": "def f():\n    from pkg import a\n    return a\n",
        "pkg/d.py": "from pkg.a import g\n",
    })
    assert import_circles(tmp_path, ("pkg",)) == [
        "import circle pkg.a -> pkg.b -> pkg.c -> pkg.a, closed by pkg/c.py:2 "
        "(pkg.c imports pkg.a); its imports: pkg/a.py:1 (pkg.a imports pkg.b); "
        "pkg/b.py:1 (pkg.b imports pkg.c); pkg/c.py:2 (pkg.c imports pkg.a)"]


def test_the_check_sees_a_circle_through_a_relative_import(tmp_path):
    plant(tmp_path, {
        "pkg/__init__.py": "from .a import x\n",
        "pkg/a.py": "from . import x\n",
    })
    circles = import_circles(tmp_path, ("pkg",))
    assert len(circles) == 1 and circles[0].startswith("import circle pkg -> pkg.a -> pkg,")


def test_the_check_passes_a_package_without_a_circle(tmp_path):
    plant(tmp_path, {
        "pkg/__init__.py": "from pkg.a import f\n",
        "pkg/a.py": "from pkg.b import g\ndef f():\n    import pkg.b\n",
        "pkg/b.py": "import os\ndef g():\n    pass\n",
    })
    assert import_circles(tmp_path, ("pkg",)) == []
    assert private_imports(tmp_path, ("pkg",)) == []


def test_the_check_sees_a_private_name_taken_from_another_module(tmp_path):
    plant(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "_hidden = 1\n__version__ = '1'\n",
        "pkg/b.py": "from pkg.a import _hidden, __version__\n",
        "pkg/c.py": "def f():\n    from pkg import a as m\n    return m._hidden\n",
        "pkg/d.py": "import os\nfrom os import _exit\nimport pkg.a\nx = pkg.a._hidden + len(os._exit.__name__)\n",
        "pkg/e.py": "_own = 1\nclass K:\n    _slot = 2\nprint(K._slot)\n",
    })
    assert private_imports(tmp_path, ("pkg",)) == [
        "pkg/b.py:1: pkg.b imports _hidden from pkg.a",
        "pkg/c.py:3: pkg.c reads _hidden from pkg.a",
        "pkg/d.py:4: pkg.d reads _hidden from pkg.a",
    ]
