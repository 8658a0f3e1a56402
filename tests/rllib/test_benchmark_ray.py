"""``skipbo benchmark --ray``: the games as Ray tasks give the scorecard of ``--workers 1``, deal for deal.

Needs ``pip install -e '.[rllib]'`` (``make test-rllib`` runs it); the module is skipped without Ray. One
local Ray instance bound to 127.0.0.1 serves the module and is shut down at its end.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[rllib]'")

import ray  # noqa: E402

from skipbo_cli.main import main  # noqa: E402
from tests.evaluation.test_benchmark import policy_class_of_the_docs  # noqa: E402

DEALS = 2
TIMED = ("ms_per_decision", "engine")
"""What may differ between the two runs: the time a decision, and the engine (Ray tasks play the rules engine,
one process plays a kernel bot on the batched engine)."""


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    from evaluation.ray_runner import connect_ray

    assert connect_ray("local", num_cpus=2)
    yield
    ray.shutdown()


def scorecard(argv: list[str], path) -> dict:
    assert main(["benchmark", *argv, "--deals", str(DEALS), "--no-progress", "--json", str(path)]) == 0
    return json.loads(path.read_text())


@pytest.mark.parametrize("kind", ["python policy", "kernel bot"])
def test_ray_gives_the_scorecard_of_one_process(kind, tmp_path, capsys):
    if kind == "python policy":
        policy = tmp_path / "my_policy.py"
        policy.write_text(policy_class_of_the_docs())
        spec = f"mine={policy}:StockFirst"
    else:
        spec = "expert"
    local = scorecard([spec, "--workers", "1"], tmp_path / "local.json")
    on_ray = scorecard([spec, "--ray"], tmp_path / "ray.json")
    assert (local["ray"], on_ray["ray"]) == (None, "local")
    assert on_ray["command"].endswith(f"--deals {DEALS} --ray local  # skipbo-bench-v1")
    assert [r["engine"] for r in on_ray["rungs"]] == ["python"] * len(local["rungs"])
    if kind == "kernel bot":
        assert {r["engine"] for r in local["rungs"]} == {"vector"}
    for one, tasks in zip(local["rungs"], on_ray["rungs"], strict=True):
        assert one["games"] == 2 * DEALS and one["deals"] == DEALS
        assert {k: v for k, v in one.items() if k not in TIMED} == {k: v for k, v in tasks.items() if k not in TIMED}
    assert on_ray["rating"] == local["rating"]
    assert on_ray["deal_set"] == local["deal_set"]
    assert not on_ray["complete"] and not local["complete"]
