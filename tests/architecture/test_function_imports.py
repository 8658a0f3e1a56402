"""Project modules are imported at the top of a module, not inside functions.

An import inside a function hides what a module needs and can hide an import circle
(``test_import_cycles`` sees it, Python only when the function runs). The test reads every module
of the project's code with ``ast`` and fails on an import of a project module inside a function
(a method, a nested function, a lambda; an ``import`` statement, or ``importlib.import_module`` of a
name the module writes as a string) unless the listed set below names that module and that
import with its reason: a module that loads an optional or heavy library (Gymnasium and PettingZoo,
which ``import skipbo_env`` never loads; torch and SB3; Ray; matplotlib; starlette) only on the path
that needs it, or a subcommand's heavy modules loaded when it runs rather than for its ``--help``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("skipbo_env", "agents", "evaluation", "training", "skipbo_cli", "skipbo_web", "benchmarks", "experiments")
"""The folders whose modules are read; an import of any of them is a project import."""

ENVIRONMENTS = "Gymnasium and PettingZoo load when an environment is made; `import skipbo_env` never loads them"
PICTURE = "matplotlib loads only when a picture of the table is drawn"
SUBCOMMAND = ("the agents package loads the kernels (numba, seconds) when the subcommand runs, not for its "
              "--help (skipbo_cli/main.py loads only the subcommand it runs)")
RAY = "Ray (the optional `rllib` extra) loads when an RLlib run starts; the module loads without it"
NEURAL_TORCH = ("torch loads (training.neural.value_net) when a network is built, fitted or quantized, as the "
                "trainer's own `import torch` does; the module and the state's checks load without it")
SB3_TORCH = ("torch and SB3 load when a run builds its model, as the trainer's own SB3 imports do; the module "
             "(env_factory, vector_selfplay_env) loads without them")
SCRIPT_TORCH = "torch loads when the measurement runs, not for the script's --help"

ALLOWED = {
    ("skipbo_env/__init__.py", "skipbo_env.envs.aec"): ENVIRONMENTS,
    ("skipbo_env/__init__.py", "skipbo_env.envs.single_agent"): ENVIRONMENTS,
    ("skipbo_env/envs/common.py", "skipbo_env.envs.picture"): PICTURE,
    ("skipbo_cli/replay.py", "skipbo_env.envs.picture"): PICTURE,
    ("skipbo_cli/import_sb3.py", "agents.saved_model"): SUBCOMMAND,
    ("skipbo_cli/import_sb3.py", "agents.sb3_import"): SUBCOMMAND,
    ("agents/loading.py", "agents.saved_model"): "an installation without agents/saved_model.py is refused in one "
                                                 "line (tests/agents/test_load_policy.py takes the module away)",
    ("agents/policy.py", "agents.batched.table"): "Bot's kernel hook, named rather than imported: agents.batched.table "
                                                  "imports the registry, which imports the bots, which import "
                                                  "agents.policy (issue 62: the table is to register itself "
                                                  "from above instead)",
    ("skipbo_web/serve.py", "skipbo_web.app"): "starlette and uvicorn (the optional `web` extra) load when the "
                                               "server starts; a missing one is reported in one line",
    ("training/neural/state.py", "training.neural.value_net"): NEURAL_TORCH,
    ("training/neural/trainer.py", "training.neural.value_net"): NEURAL_TORCH,
    ("training/sb3/trainer.py", "training.sb3.network"): SB3_TORCH,
    ("training/sb3/trainer.py", "training.sb3.selfplay_vector"): SB3_TORCH,
    ("training/td/config.py", "training.td.turn_change"): "torch: a config is loaded and checked without it "
                                                          "(`skipbo train --list-keys`, the config tests)",
    ("training/rllib/trainer.py", "training.rllib.env"): RAY,
    ("training/rllib/trainer.py", "training.rllib.metrics"): RAY,
    ("training/rllib/trainer.py", "training.rllib.module"): RAY,
    ("benchmarks/rllib_speed.py", "training.rllib.env"): "Ray loads after the script has checked it is installed",
    ("benchmarks/td_speed.py", "training.td.learner"): SCRIPT_TORCH,
    ("benchmarks/td_speed.py", "training.td.trainer"): SCRIPT_TORCH,
    ("benchmarks/training_speed.py", "training.sb3.network"): SCRIPT_TORCH,
    ("experiments/td_correction.py", "training.td.trainer"): SCRIPT_TORCH,
    ("experiments/td_correction.py", "training.td.residual"): SCRIPT_TORCH,
    ("experiments/td_step_noise.py", "training.neural.value_net"): SCRIPT_TORCH,
    ("experiments/td_step_noise.py", "training.td.trainer"): SCRIPT_TORCH,
}
"""(file, imported module) -> why that module is imported inside a function there."""


def resolved(node: ast.ImportFrom, module: str, path: Path) -> str:
    """The module ``from ... import`` reads, with a relative import resolved against ``module``."""
    if not node.level:
        return node.module
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports_in_functions(tree: ast.AST):
    """Every import statement inside a function, method or lambda of ``tree``, and every
    ``importlib.import_module(name)`` there whose ``name`` is a string written in the call or a string
    constant of the module (an import by another spelling; a name computed at run time is not seen)."""
    def walk(node, inside):
        for child in ast.iter_child_nodes(node):
            if inside and (isinstance(child, (ast.Import, ast.ImportFrom)) or named_import(child) is not None):
                yield child
            yield from walk(child, inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    yield from walk(tree, False)


def named_import(node: ast.AST) -> ast.expr | None:
    """The argument of a call ``importlib.import_module(x)`` or ``import_module(x)``, else ``None``."""
    if isinstance(node, ast.Call) and node.args and (
            isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"
            or isinstance(node.func, ast.Name) and node.func.id == "import_module"):
        return node.args[0]
    return None


def string_constants(tree: ast.Module) -> dict[str, str]:
    """The module's top-level ``NAME = "text"`` assignments."""
    return {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            for target in node.targets if isinstance(target, ast.Name)}


def function_imports(root: Path = ROOT, packages=PACKAGES) -> list[tuple[str, int, str]]:
    """(file, line, imported project module) of every project import inside a function."""
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root)
            parts = relative.with_suffix("").parts
            module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            tree = ast.parse(path.read_text(), filename=str(path))
            constants = string_constants(tree)
            for node in imports_in_functions(tree):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [resolved(node, module, path)]
                else:
                    argument = named_import(node)
                    name = argument.value if isinstance(argument, ast.Constant) else \
                        constants.get(argument.id) if isinstance(argument, ast.Name) else None
                    names = [name] if isinstance(name, str) else []
                found += [(relative.as_posix(), node.lineno, name) for name in names
                          if name.split(".")[0] in packages]
    return found


def unlisted(root: Path = ROOT, packages=PACKAGES, allowed=None) -> list[str]:
    allowed = ALLOWED if allowed is None else allowed
    return [f"{path}:{line}: imports {name} inside a function; import it at the top of the module (or list it, "
            f"with its reason, in {Path(__file__).name})"
            for path, line, name in function_imports(root, packages) if (path, name) not in allowed]


def test_no_project_module_is_imported_inside_a_function_unless_listed():
    found = unlisted()
    assert not found, "\n".join(found)


def test_every_listed_import_is_still_there():
    found = {(path, name) for path, _, name in function_imports()}
    assert sorted(set(ALLOWED) - found) == []


def test_the_check_sees_imports_in_functions_methods_lambdas_and_import_module_by_name(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "top.py").write_text("import os\nimport pkg.sub\nfrom pkg import sub\n"
                                    "try:\n    from pkg.sub import x\nexcept ImportError:\n    pass\n"
                                    "class K:\n    from pkg import sub\n")
    (package / "sub" / "inner.py").write_text(
        "def f():\n    import json\n    import pkg.top\n    def g():\n        from . import x\n"
        "class K:\n    def m(self):\n        from ..top import y\n"
        "h = lambda: __import__('pkg')\nNAME = 'pkg.top'\ndef k(name):\n    importlib.import_module(NAME)\n"
        "    importlib.import_module('json')\n    return importlib.import_module(name) or import_module('pkg.sub')\n")
    assert function_imports(tmp_path, ("pkg",)) == [
        ("pkg/sub/inner.py", 3, "pkg.top"), ("pkg/sub/inner.py", 5, "pkg.sub"), ("pkg/sub/inner.py", 8, "pkg.top"),
        ("pkg/sub/inner.py", 12, "pkg.top"), ("pkg/sub/inner.py", 14, "pkg.sub")]
    assert unlisted(tmp_path, ("pkg",), allowed={("pkg/sub/inner.py", "pkg.top"): "a reason"}) == [
        f"pkg/sub/inner.py:{line}: imports pkg.sub inside a function; import it at the top of the module (or list "
        "it, with its reason, in test_function_imports.py)" for line in (5, 14)]
