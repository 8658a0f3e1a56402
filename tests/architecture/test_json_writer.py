"""Every JSON file the project writes is standard JSON, through one writer (``skipbo_env.files.json_text``)."""

import ast
import json
import math
import re
from pathlib import Path

import pytest

from skipbo_env.files import json_text, write_json_atomically

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("skipbo_env", "agents", "evaluation", "training", "skipbo_cli", "skipbo_web", "benchmarks", "experiments",
            "examples")
WRITER = "skipbo_env/files.py"
NOT_A_FILE = {
    "skipbo_env/game.py": (2, "a position's digest, and a deep copy of a loaded start"),
    "skipbo_env/saved_games.py": (1, "a deep copy through JSON, to replay a loaded game"),
    "evaluation/benchmark.py": (2, "the deal set's digest"),
    "evaluation/report.py": (2, "the versions and rules in the printed header"),
    "evaluation/benchmark_report.py": (1, "the versions in the printed header"),
    "skipbo_web/guard.py": (1, "an HTTP error body"),
    "benchmarks/vector_speed.py": (1, "figures printed with --json"),
    "benchmarks/training_speed.py": (2, "a command-line override, and figures printed"),
    "benchmarks/compile_time.py": (1, "figures printed"),
    "benchmarks/engine_speed.py": (1, "figures printed"),
    "benchmarks/env_speed.py": (1, "figures printed"),
}
"""The modules that call ``json.dumps`` for something that is not a file, how many times, and why."""


def json_dump_calls(path: Path) -> int:
    tree = ast.parse(path.read_text(), filename=str(path))
    return sum(1 for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr in ("dump", "dumps") and isinstance(node.func.value, ast.Name)
               and node.func.value.id == "json")


def test_no_module_but_the_writer_turns_data_into_a_json_file():
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative != WRITER and (calls := json_dump_calls(path)):
                found[relative] = calls
    assert found == {module: count for module, (count, _) in NOT_A_FILE.items()}


@pytest.mark.parametrize("value, place", [
    ({"rungs": [{"margin_ci95": [-math.inf, math.inf]}]}, "rungs[0].margin_ci95[0]"),
    ([1.0, math.nan], "[1]"),
    (math.inf, "the value"),
])
def test_nan_and_infinities_are_refused_naming_where_they_sit(value, place):
    with pytest.raises(ValueError, match=re.escape(f"not standard JSON: {place} is NaN")):
        json_text(value)


def test_the_writer_writes_what_a_strict_reader_reads_back(tmp_path):
    data = {"interval": None, "rate": 0.5, "games": [1, 2], "name": "planner"}
    write_json_atomically(tmp_path / "out.json", data)

    def refuse(constant):
        raise AssertionError(constant)

    assert json.loads((tmp_path / "out.json").read_text(), parse_constant=refuse) == data
    with pytest.raises(ValueError):
        write_json_atomically(tmp_path / "bad.json", {"x": math.nan})
    assert not (tmp_path / "bad.json").exists()
