"""The README and the documentation pages say only true things about the repository: the strength
tables are exactly ``docs/strength.jsonl`` (and agree with the evaluation files they cite), and every
file path, ``skipbo`` subcommand and flag, ``make`` target, config key and project name they put in
code exists.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import importlib
import io
import json
import re
import subprocess
from pathlib import Path

import pytest

from skipbo_cli.main import SUBCOMMANDS, build_parser
from evaluation.benchmark import PROTOCOL
from skipbo_env import Rules
from skipbo_env.files import read_file_text
from tests.docs.strength_table import MAX_PAGE_BYTES, PAGES, ROOT, SOURCE, load_rows, render_table, table_in
from training.config import describe_schema

DOC_PAGES = sorted((ROOT / "docs").glob("*.md"))
CHECKED_PAGES = [ROOT / "README.md", *DOC_PAGES]
PACKAGES = ("skipbo_env", "agents", "training", "evaluation", "skipbo_cli", "skipbo_web")
FILE_SUFFIXES = ("json", "yaml", "yml", "png", "zip", "py", "md", "pt", "txt", "ipynb", "toml", "pdf", "svg")
EXTERNAL_NAMES = {
    # names of other projects (and Python's) that the pages cite: every other CamelCase name is the project's
    "DeprecatedEnv", "ImportError", "MaskablePPO", "MlpPolicy", "MultiAgentOffPolicyAlgorithm", "PettingZooEnv",
    "RayCluster", "RecordVideo", "TerminateIllegalWrapper", "TimeLimit", "ValueError", "VecEnv",
}
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"`([^`\n]+(?:\n[^`\n]+)?)`")
CAMEL_CASE = re.compile(r"^[A-Z][A-Za-z0-9]*[a-z][A-Z][A-Za-z0-9]*$")
PYTHON_NAME = re.compile(r"(?<![\w./-])(" + "|".join(PACKAGES) + r")((?:\.[A-Za-z_]\w*)+)")
SKIPBO_COMMAND = re.compile(r"(?<![\w./-])skipbo ([A-Za-z][\w-]*)([^#\n]*)")
MAKE_COMMAND = re.compile(r"(?<![\w./-])make ([a-z][\w-]*)")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
MAX_EVALUATION_BYTES = 64 << 20
CONFIG_KEY = re.compile(r"^([a-z_]+)\.([a-z_]+|\*)(?:=\S*|:\s.*)?$")


def read(path: Path) -> str:
    return read_file_text(path, max_bytes=MAX_PAGE_BYTES)


# ---------------------------------------------------------------------- what the pages put in code


def code_of(text: str) -> tuple[list[str], list[str]]:
    """The lines of the fenced code blocks (continuations joined) and the inline code spans."""
    lines = []
    for block in FENCE.findall(text):
        lines += block.replace("\\\n", " ").splitlines()
    spans = [span.replace("\n", " ") for span in INLINE.findall(FENCE.sub("", text))]
    return lines, spans


def tokens_of(code: list[str]) -> list[str]:
    return [token.strip("\"'()[],;.") for line in code for token in line.split()]


def path_candidates(token: str) -> list[str]:
    """The repository paths a code token names: its braces expanded, a ``:Class`` suffix kept apart."""
    brace = re.search(r"\{([^}]*)\}", token)
    if brace:
        return [found for part in brace.group(1).split(",")
                for found in path_candidates(token[:brace.start()] + part + token[brace.end():])]
    return [token]


@functools.cache
def tracked_top_level() -> frozenset[str]:
    """The names at the top of the repository that git tracks (the folders and files a path may start with)."""
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return frozenset(line.split("/")[0] for line in listed.splitlines())


def named_paths(text: str) -> set[str]:
    """Every path in the text's code that starts at a tracked top-level name (``agents/planner.py``,
    ``configs/quickstart.yaml``, ``Makefile``), and every relative link target of the page."""
    lines, spans = code_of(text)
    found = set()
    for token in tokens_of(lines + spans) + re.findall(r"\]\(([^)#\s]+)", text):
        for candidate in path_candidates(token):
            path = candidate.split(":")[0] if ".py:" in candidate else candidate
            if "..." in path or "*" in path or "://" in path:
                continue
            if path.split("/")[0] in tracked_top_level():
                found.add(candidate)
    return found


def defined_names(path: Path) -> set[str]:
    """The names a module defines or imports at its top level, and those in its ``__all__``."""
    tree = ast.parse(read(path))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {target.id for target in targets if isinstance(target, ast.Name)}
            if any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
                names |= set(ast.literal_eval(node.value))
    return names


def module_file(parts: list[str]) -> Path | None:
    stem = ROOT.joinpath(*parts)
    for path in (stem.with_suffix(".py"), stem / "__init__.py"):
        if path.is_file():
            return path
    return None


def python_name_exists(dotted: str) -> bool:
    """Whether ``package.module[.name]`` names a module of the project and a name it defines (read with
    ``ast``, so a module that needs Ray is checked without importing it)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = module_file(parts[:cut])
        if path is not None:
            return cut == len(parts) or parts[cut] in defined_names(path)
    return False


@functools.cache
def project_names() -> frozenset[str]:
    return frozenset(name for package in PACKAGES for path in (ROOT / package).rglob("*.py")
                     for name in defined_names(path))


@functools.cache
def config_keys() -> frozenset[str]:
    """Every key of ``skipbo train --list-keys``, and ``rules.SETTING`` for every ``Rules`` setting."""
    keys = {line.split()[0] for line in describe_schema().splitlines()}
    return frozenset(keys | {f"rules.{field.name}" for field in dataclasses.fields(Rules)})


@functools.cache
def subcommand_help(command: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        build_parser(command).parse_args([command, "--help"])
    return out.getvalue()


@functools.cache
def make_targets() -> frozenset[str]:
    return frozenset(re.findall(r"^([A-Za-z][\w.-]*)\s*:(?!=)", read(ROOT / "Makefile"), re.M))


# ---------------------------------------------------------------------- the problems a page has


def missing_paths(text: str) -> list[str]:
    problems = []
    for candidate in sorted(named_paths(text)):
        path, _, attribute = candidate.partition(".py:")
        file = ROOT / (path + ".py" if attribute else path)
        if not file.exists():
            problems.append(f"path {candidate}: no such file or folder")
        elif attribute and attribute not in defined_names(file):
            problems.append(f"path {candidate}: {file.name} defines no {attribute}")
    return problems


def wrong_commands(text: str) -> list[str]:
    lines, spans = code_of(text)
    problems = []
    for code in lines + spans:
        for command, rest in SKIPBO_COMMAND.findall(code):
            if command.isupper() or command.startswith("-"):
                continue  # a placeholder (skipbo COMMAND) or a flag of skipbo itself
            if command not in SUBCOMMANDS:
                problems.append(f"skipbo {command}: no such subcommand (there are {', '.join(SUBCOMMANDS)})")
                continue
            for flag in FLAG.findall(rest):
                if not re.search(rf"(?<![\w-]){flag}(?![\w-])", subcommand_help(command)):
                    problems.append(f"skipbo {command} {flag}: no such flag")
        problems += [f"make {target}: no such target in the Makefile" for target in MAKE_COMMAND.findall(code)
                     if target not in make_targets()]
    return problems


def wrong_keys_and_names(text: str) -> list[str]:
    lines, spans = code_of(text)
    sections = {key.split(".")[0] for key in config_keys()}
    problems = []
    for token in spans + [token for line in lines if "skipbo train" in line for token in line.split()]:
        key = CONFIG_KEY.match(token.strip())
        if key and key.group(1) in sections and key.group(2) not in FILE_SUFFIXES:
            dotted = f"{key.group(1)}.{key.group(2)}"
            if key.group(2) != "*" and dotted not in config_keys() and not python_name_exists(dotted):
                problems.append(f"config key {dotted}: not in skipbo train --list-keys")
    for code in lines + spans:
        for package, rest in PYTHON_NAME.findall(code):
            if rest.rsplit(".", 1)[-1] not in FILE_SUFFIXES and not python_name_exists(package + rest):
                problems.append(f"name {package + rest}: no such module or name in it")
    for span in spans:
        if CAMEL_CASE.match(span) and span not in EXTERNAL_NAMES and span not in project_names():
            problems.append(f"name {span}: defined nowhere in the project (nor a known outside name)")
    return problems


def problems_of(text: str) -> list[str]:
    return missing_paths(text) + wrong_commands(text) + wrong_keys_and_names(text)


# ---------------------------------------------------------------------- the tests


@pytest.mark.parametrize("page", CHECKED_PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_path_command_flag_key_and_name_a_page_puts_in_code_exists(page):
    assert problems_of(read(page)) == []


@pytest.mark.parametrize("planted, problem", [
    ("the browser test is `tests/test_web_browser.py`", "path tests/test_web_browser.py: no such file"),
    ("```bash\npython examples/own_policy_tournament.py:StockLast\n```", "defines no StockLast"),
    ("the cache is `ObservationKeeper`", "name ObservationKeeper: defined nowhere"),
    ("`skipbo_env.encoding.ObservationKeeper`", "name skipbo_env.encoding.ObservationKeeper"),
    ("run `skipbo trian configs/quickstart.yaml`", "skipbo trian: no such subcommand"),
    ("```bash\nskipbo evaluate --agents greedy --gmaes 4\n```", "skipbo evaluate --gmaes: no such flag"),
    ("`make docs-site`", "make docs-site: no such target"),
    ("`ppo.learning_rat`", "config key ppo.learning_rat"),
    ("```bash\nskipbo train configs/quickstart.yaml budget.max_minute=3\n```", "config key budget.max_minute"),
    ("`rules.stock_sizes`", "config key rules.stock_sizes"),
    ("see [the page](docs/missing.md)", "path docs/missing.md: no such file"),
])
def test_a_planted_stale_reference_is_caught(planted, problem):
    found = problems_of(read(ROOT / "README.md") + "\n\n" + planted + "\n")
    assert len(found) == 1 and problem in found[0], found


def test_real_references_of_every_kind_are_recognised_and_pass():
    text = ("`agents/planner.py` `configs/quickstart.yaml` `Makefile` `make test` `skipbo train --list-keys` "
            "`ppo.learning_rate` `budget.max_minutes` `rules.num_players=3` `agents.planner.TurnSearch` "
            "`evaluation.tournament` `training.rllib.env` `CompiledHand`")
    lines, spans = code_of(text)
    assert "agents/planner.py" in named_paths(text) and "Makefile" in named_paths(text)
    assert len(spans) == 12
    assert problems_of(text) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_the_strength_tables_show_exactly_the_strength_file(page):
    assert table_in(read(page)) == render_table(load_rows()), "run: python -m tests.docs.strength_table --write"


def test_a_changed_figure_in_the_strength_file_no_longer_matches_the_pages():
    rows = load_rows()
    rows[2]["figures"][0]["win"] += 0.1
    assert table_in(read(ROOT / "README.md")) != render_table(rows)


def test_adding_a_bot_is_one_line_of_the_strength_file(tmp_path):
    lines = read(SOURCE).splitlines()
    assert [json.loads(line) for line in lines] == load_rows() and len(lines) == len(load_rows())
    added = {"name": "`new`", "made": "a new bot", "figures": [{"win": 50.0, "ci": [48.0, 52.0], "vs": "`planner`",
                                                                "games": 2000}]}
    longer = tmp_path / "strength.jsonl"
    longer.write_text("\n".join([*lines, json.dumps(added)]) + "\n")
    assert load_rows(longer) == [*load_rows(), added]
    assert render_table(load_rows(longer)).count("\n| ") == render_table(load_rows()).count("\n| ") + 1


def figure_in_file(figure: dict) -> dict:
    """The games, win rate and interval behind a figure: from a ``skipbo evaluate --json`` file (the pairwise
    rate, or the agent's over the table), or from a ``skipbo benchmark --json`` file (the rung ``opponent``)."""
    result = json.loads(read_file_text(ROOT / figure["source"], max_bytes=MAX_EVALUATION_BYTES))
    if result.get("protocol") == PROTOCOL:
        assert result["policy"]["spec"] == figure["agent"] and result["complete"]
        rung = next(rung for rung in result["rungs"] if rung["rung"] == figure["opponent"])
        return {"games": rung["games"], "win_rate": rung["win_rate"], "ci95": rung["win_ci95"]}
    if "opponent" in figure:
        return result["pairwise"][figure["agent"]][figure["opponent"]]
    return result["agents"][figure["agent"]]


@pytest.mark.parametrize("figure", [figure for row in load_rows() for figure in row["figures"] if "source" in figure],
                         ids=lambda figure: f"{figure['agent']}-vs-{figure.get('opponent', 'table')}")
def test_a_figure_with_an_evaluation_file_agrees_with_it(figure):
    measured = figure_in_file(figure)
    assert measured["games"] == figure["games"]
    assert abs(100 * measured["win_rate"] - figure["win"]) <= 0.05 + 1e-9
    for low_or_high, printed in zip(measured["ci95"], figure["ci"]):
        assert abs(100 * low_or_high - printed) <= 0.05 + 1e-9


def test_the_readme_stays_short_and_names_every_documentation_page():
    readme = read(ROOT / "README.md")
    assert len(readme.splitlines()) <= 150
    for page in ("engine", "observation", "environments", "bots", "evaluation", "training", "rllib", "cli", "web",
                 "layout", "RULES"):
        assert f"docs/{page}.md" in readme, page


def test_the_site_navigation_lists_every_page():
    navigation = read(ROOT / "mkdocs.yml")
    for page in DOC_PAGES + sorted((ROOT / "docs" / "api").glob("*.md")):
        assert str(page.relative_to(ROOT / "docs")) in navigation, page.name


def test_the_home_page_lists_every_page():
    home = read(ROOT / "docs" / "index.md")
    for page in DOC_PAGES:
        if page.name != "index.md":
            assert f"]({page.name})" in home, page.name


def test_the_api_reference_names_modules_that_exist():
    for page in sorted((ROOT / "docs" / "api").glob("*.md")):
        for module in re.findall(r"^::: (\S+)", read(page), re.M):
            assert importlib.util.find_spec(module.split(".")[0]) is not None and python_name_exists(module), module


def test_the_observation_size_is_stated_on_the_observation_page_only_and_is_obs_size():
    from skipbo_env import OBS_SIZE

    assert f"float32 vector of {OBS_SIZE} values" in read(ROOT / "docs" / "observation.md")
    figure = re.compile(rf"(?<![\d.,-]){OBS_SIZE}(?![\d,])")
    elsewhere = [page.name for page in CHECKED_PAGES if page.name != "observation.md" and figure.search(read(page))]
    assert elsewhere == [], f"{elsewhere} state the observation size; say it once, in docs/observation.md"
