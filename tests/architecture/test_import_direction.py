"""Imports point one way: rules engine -> encoding -> environments -> agents -> training and
evaluation -> command line (README, "Layout"). The test reads every module's imports with ``ast``
(top-level and inside functions alike) and fails on an arrow that runs back up."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("skipbo_env", "agents", "evaluation", "training", "skipbo_cli", "skipbo_web")

# (module prefix, layer): the longest matching prefix names a module's layer.
LAYERS = (
    ("skipbo_env", 0),            # the rules engine: cards, rules, actions, game, state files, match
    ("skipbo_env.encoding", 1),   # observation and action encoding
    ("skipbo_env.vector", 1),     # the batched engine (rules and encoding as kernels)
    ("skipbo_env.envs", 2),       # PettingZoo, Gymnasium and SB3 environments
    ("skipbo_env.skipbo_v1", 2),  # the AEC environment by PettingZoo's versioned name (from skipbo_env import skipbo_v1)
    ("skipbo_env.skipbo_v0", 2),  # the retired name, refused with the current one (envs.registration.AEC_ENV_NAME)
    ("agents", 3),                # policies, bots, model files, batched players
    ("evaluation", 4),            # tournaments
    ("training", 5),              # self-play training (may use evaluation, never the reverse)
    ("skipbo_cli", 6),            # the command line and its terminal views
    ("skipbo_web", 6),            # the web table
)
# RL libraries the lower layers must not touch (an environment may; a bot or the engine never).
RL_LIBRARIES = {"gymnasium", "pettingzoo", "torch", "stable_baselines3", "sb3_contrib", "ray"}
RL_FREE_LAYERS = {0, 1}


def layer_of(module: str) -> int | None:
    matches = [(len(prefix), layer) for prefix, layer in LAYERS
               if module == prefix or module.startswith(prefix + ".")]
    return max(matches)[1] if matches else None


def project_modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def imported_names(path: Path, module: str) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module
            found.append((name, node.lineno))
            found += [(f"{name}.{alias.name}", node.lineno) for alias in node.names]
    return found


def backward_imports() -> list[str]:
    problems = []
    for module, path in project_modules():
        own = layer_of(module)
        for name, line in imported_names(path, module):
            if path.name == "__init__.py" and name.startswith(module + "."):
                continue  # a package's front page re-exports its own modules
            target = layer_of(name)
            where = f"{path.relative_to(ROOT)}:{line}"
            if target is not None and target > own:
                problems.append(f"{where}: {module} (layer {own}) imports {name} (layer {target})")
            if own in RL_FREE_LAYERS and name.split(".")[0] in RL_LIBRARIES:
                problems.append(f"{where}: {module} is below the environments but imports {name}")
    return sorted(set(problems))


def test_no_import_runs_back_up_the_layers():
    assert backward_imports() == []


def sideways_imports() -> list[str]:
    """Imports of the command line from the web table: the two front ends share the layers below them
    (saved games, moves in words), never each other's modules."""
    problems = []
    for module, path in project_modules():
        if module.split(".")[0] != "skipbo_web":
            continue
        for name, line in imported_names(path, module):
            if name.split(".")[0] == "skipbo_cli":
                problems.append(f"{path.relative_to(ROOT)}:{line}: {module} imports {name} (the command line)")
    return sorted(set(problems))


def test_the_web_table_imports_nothing_of_the_command_line():
    assert sideways_imports() == []


def test_the_check_sees_a_sideways_import(tmp_path, monkeypatch):
    fake = tmp_path / "skipbo_web"
    fake.mkdir()
    (fake / "replays.py").write_text("from skipbo_cli.replay import load_hands\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    assert sideways_imports() == [
        "skipbo_web/replays.py:1: skipbo_web.replays imports skipbo_cli.replay (the command line)",
        "skipbo_web/replays.py:1: skipbo_web.replays imports skipbo_cli.replay.load_hands (the command line)",
    ]


def test_the_check_sees_a_backward_import(tmp_path, monkeypatch):
    fake = tmp_path / "skipbo_env"
    fake.mkdir()
    (fake / "cards.py").write_text("def f():\n    from agents import load_policy\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    assert backward_imports() == [
        "skipbo_env/cards.py:2: skipbo_env.cards (layer 0) imports agents (layer 3)",
        "skipbo_env/cards.py:2: skipbo_env.cards (layer 0) imports agents.load_policy (layer 3)",
    ]


@pytest.mark.parametrize("module,layer", [("skipbo_env.game", 0), ("skipbo_env.envs.aec", 2),
                                          ("agents.batched.bots", 3), ("skipbo_cli.main", 6)])
def test_layers_are_named_by_the_longest_prefix(module, layer):
    assert layer_of(module) == layer
