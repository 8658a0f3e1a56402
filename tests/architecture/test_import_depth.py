"""The agents package is not a tower: its longest chain of imports stays short.

The chain is counted in modules ("floors"): ``a`` imports ``b`` imports ``c`` is three. Only the
imports a module runs when it loads count (its top level, a class body, an ``if`` or ``try`` there;
not a function's body), and only imports between modules of ``agents/``: ``from agents.batched import
bots`` points at ``agents.batched.bots``, ``from agents.registry import BOTS`` at ``agents.registry``.
Issue 62 found thirteen floors (twelve at load time, a thirteenth through the imports inside
``agents.batched.compile_kernels``; a lazy package ``__getattr__`` and imports inside functions kept the
circles away); removing the needless edges brought it to eleven.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_FLOORS = 12
"""The most modules one chain of imports inside ``agents/`` may pass through (issue 62: fewer than 13)."""


def modules_of(root: Path, package: str) -> dict[str, Path]:
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def load_time_imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of ``modules`` that ``module`` imports when it loads."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets = set()

    def visit(nodes):
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names if alias.name in modules)
            elif isinstance(node, ast.ImportFrom):
                source = node.module
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    if f"{source}.{alias.name}" in modules:
                        targets.add(f"{source}.{alias.name}")
                    elif source in modules:
                        targets.add(source)
            else:
                visit(ast.iter_child_nodes(node))

    visit(ast.parse(path.read_text(), filename=str(path)).body)
    targets.discard(module)
    return targets


def longest_chain(root: Path = ROOT, package: str = "agents") -> list[str]:
    """The longest chain of load-time imports between the modules of ``package``, first importer first."""
    modules = modules_of(root, package)
    graph = {module: sorted(load_time_imports(module, path, modules)) for module, path in modules.items()}

    @lru_cache(maxsize=None)
    def from_module(module: str, seen: frozenset = frozenset()) -> tuple[str, ...]:
        if module in seen:
            raise AssertionError(f"an import circle through {module} (tests/architecture/test_import_cycles.py)")
        chains = [from_module(target, seen | {module}) for target in graph[module]]
        return (module,) + max(chains, key=len, default=())

    return list(max((from_module(module) for module in sorted(graph)), key=len))


def test_the_agents_package_is_at_most_max_floors_deep():
    chain = longest_chain()
    assert len(chain) <= MAX_FLOORS, f"{len(chain)} floors: {' -> '.join(chain)}"


def test_the_chain_counts_load_time_imports_only(tmp_path):
    files = {
        "pkg/__init__.py": "from pkg.a import f\n",
        "pkg/a.py": "from pkg import b\ndef f():\n    from pkg import d\n",
        "pkg/b.py": "import os\nclass K:\n    from pkg.c import x\n",
        "pkg/c.py": "try:\n    from . import e\nexcept ImportError:\n    pass\nx = 1\n",
        "pkg/d.py": "from pkg.a import f\n",
        "pkg/e.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert longest_chain(tmp_path, "pkg") == ["pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.e"]
