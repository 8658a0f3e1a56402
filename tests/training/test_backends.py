"""The table of training backends: each backend is one package that declares its section, checks and trainer,
and the shared modules read the table instead of naming backends."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import typing
from pathlib import Path

from training.backends import BACKEND_PACKAGES, BACKENDS
from training.config import TrainConfig, describe_schema

ROOT = Path(__file__).resolve().parents[2]
SHARED_MODULES = ("training/run.py", "training/config.py", "training/checkpoint.py", "training/common.py",
                  "training/sections.py", "training/schema.py", "training/backends.py")


def test_every_backend_is_a_package_whose_config_declares_it():
    assert list(BACKENDS) == [package.rsplit(".", 1)[1] for package in BACKEND_PACKAGES]
    for name, backend in BACKENDS.items():
        assert (ROOT / "training" / name / "config.py").is_file()
        module, _, cls = backend.trainer.partition(":")
        assert module.startswith(f"training.{name}.") and importlib.util.find_spec(module) is not None and cls


def test_the_config_has_one_section_per_backend_and_backend_chooses_among_them():
    hints = typing.get_type_hints(TrainConfig)
    assert typing.get_args(hints["backend"]) == tuple(BACKENDS)
    for backend in BACKENDS.values():
        assert hints[backend.section] is backend.settings and dataclasses.is_dataclass(backend.settings)
        assert isinstance(getattr(TrainConfig(), backend.section), backend.settings)
        first = dataclasses.fields(backend.settings)[0].name
        assert f"\n{backend.section}.{first} " in "\n" + describe_schema()


def test_no_shared_module_names_a_backend():
    names = set(BACKENDS)
    for relative in SHARED_MODULES:
        tree = ast.parse((ROOT / relative).read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
                      and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
        named = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
                 and id(node) not in docstrings and node.value in names}
        assert not named, f"{relative} names the backends {sorted(named)}: read training/backends.py instead"
