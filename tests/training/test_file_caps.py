"""Every file a run writes, its resume reads back: for every backend and table size (2 to 6 seats), the files of the
largest config the loader accepts, computed from the schema's bounds (never trained), fit each reader's cap."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from training.config import config_from_dict
from training.schema import ConfigError

SEATS = range(2, 7)
WIDTHS = (1024, 896, 768, 640, 512, 384, 256, 128, 64, 8)


def accepted(data: dict):
    try:
        return config_from_dict(data)
    except ConfigError:
        return None


def neural_data(players: int, **neural) -> dict:
    return {"backend": "neural", "rules": {"num_players": players},
            "neural": {"tables": [["self"] * (players - 1)], **neural}}


def largest_neural(players: int):
    """The accepted config of the most weights, then of the most past networks and generations kept."""
    sizes = [(first, second) for first in WIDTHS for second in WIDTHS
             if accepted(neural_data(players, hidden=[first, second]))]
    from training.neural.config import network_weights

    hidden = list(max(sizes, key=lambda size: network_weights(list(size), players)))
    past = max(count for count in (1, 2, 3, 5, 10, 50, 1000) if accepted(neural_data(players, hidden=hidden,
                                                                                       past_networks=count)))
    generations = max(count for count in (8, 100, 1000, 10_000) if accepted(
        neural_data(players, hidden=hidden, past_networks=past, generations=count, es_generations=count)))
    config = config_from_dict(neural_data(players, hidden=hidden, past_networks=past, generations=generations,
                                          es_generations=generations))
    return config


def widest_network(players: int, hidden: list[int]) -> dict:
    """A model file's network of ``hidden`` with every weight at its widest text (``-agents.neural.MAX_WEIGHT``)."""
    import torch

    from agents.neural import MAX_WEIGHT
    from training.neural.value_net import ValueNet, quantize

    with torch.no_grad():
        document = quantize(ValueNet(players, tuple(hidden))).to_dict()

    def widest(value):
        if isinstance(value, list):
            return [widest(item) for item in value]
        return -MAX_WEIGHT if isinstance(value, int) and not isinstance(value, bool) else value

    return {key: widest(value) if key in ("first", "first_bias", "second", "second_bias", "output", "output_bias")
            else value for key, value in document.items()}


@pytest.mark.parametrize("players", SEATS)
def test_the_largest_neural_config_writes_a_model_state_and_weights_its_resume_reads(players):
    from agents.neural import MAX_MODEL_BYTES
    from training.checkpoint import compact_json
    from training.neural.config import ENTRY_BYTES, state_bytes
    from training.state_checks import MAX_STATE_BYTES

    config = largest_neural(players)
    settings = config.neural
    network = widest_network(players, settings.hidden)
    model = len(compact_json(network)) + 4096  # the model file: the network and a few lines of provenance
    assert model <= MAX_MODEL_BYTES, (players, settings.hidden)
    archive = settings.past_networks * len(compact_json(network))
    assert archive <= state_bytes(settings, players) - (settings.generations + settings.es_generations) * ENTRY_BYTES
    assert state_bytes(settings, players) <= MAX_STATE_BYTES

    from training.neural.value_net import ValueNet

    shapes = {name: tuple(tensor.shape) for name, tensor in ValueNet(players, tuple(settings.hidden)).state_dict().items()}
    buffer = io.BytesIO()
    np.savez(buffer, **{name: np.zeros(shape, np.float32) for name, shape in shapes.items()})  # as the trainer writes
    assert len(buffer.getvalue()) <= 4 * sum(math.prod(shape) for shape in shapes.values()) + 2**16  # the read cap


@pytest.mark.parametrize("backend", ["sb3", "rllib"])
def test_the_largest_ppo_config_writes_tensor_files_its_resume_reads(backend):
    """The learner (policy and value network), Adam's moments and the pool, at the widest layers and the most
    snapshots accepted (the network reads the whole observation at every table size)."""
    from agents.network import parameter_shapes
    from skipbo_env.encoding import OBS_SIZE
    from training.checkpoint import MAX_TENSOR_BYTES
    from training.ppo_sections import TENSOR_OVERHEAD

    def data(hidden, snapshots):
        return {"backend": backend, "network": {"hidden": hidden}, "opponents": {"max_snapshots": snapshots}}

    layers = max((hidden for hidden in ([w] * depth for w in (16384, 8192, 4096, 2048, 1024, 512) for depth in (1, 2, 3))
                  if accepted(data(hidden, 1))),
                 key=lambda hidden: sum(math.prod(s) for s in parameter_shapes(OBS_SIZE, hidden).values()))
    snapshots = max(count for count in (1, 2, 5, 10, 100, 1000) if accepted(data(layers, count)))
    policy = sum(math.prod(shape) for shape in parameter_shapes(OBS_SIZE, layers).values())
    value = policy - sum(math.prod(shape) for name, shape in parameter_shapes(OBS_SIZE, layers).items()
                         if name.startswith("action_net")) + layers[-1] + 1
    learner = 4 * (policy + value) + TENSOR_OVERHEAD
    files = {"learner.pt": learner, "optimizer.pt": 2 * learner, "pool.pt": snapshots * (4 * policy + TENSOR_OVERHEAD)}
    if backend == "rllib":
        files["learner state"] = 3 * learner
    for name, size in files.items():
        assert size <= MAX_TENSOR_BYTES, (name, layers, snapshots, size)


def test_a_neural_config_whose_state_would_outgrow_the_cap_is_refused_naming_the_keys():
    with pytest.raises(ConfigError, match="neural.past_networks=1000 .* state.json would take up to"):
        config_from_dict(neural_data(2, hidden=[512, 256], past_networks=1000))
    with pytest.raises(ConfigError, match="neural.generations=10001 is not allowed"):
        config_from_dict(neural_data(2, generations=10_001))
    with pytest.raises(ConfigError, match="neural.curve_opponents has 17 items: give at most 16"):
        config_from_dict(neural_data(2, curve_opponents=["planner"] * 17))


WIDEST_FLOAT = -1.2345678901234567e-05
"""A float whose ``repr`` is as long as any a state holds (a probability, a fitness, a weight of at most 1e6)."""
WIDEST_RATE = 0.12345678901234566


def widest_stats(names: list[str]) -> dict:
    """An evaluation's stats of one opponent or table at their widest (``evaluate_policy``, the sNES curve)."""
    return {"games": 10**7, "wins": 10**7, "draws": 10**7, "losses": 10**7, "win_rate": WIDEST_RATE,
            "ci95": [WIDEST_RATE, WIDEST_RATE], "mean_points": WIDEST_FLOAT,
            "others": {f"{role}:{name}": WIDEST_RATE for role, name in enumerate(names, start=1)}}


def largest_accepted(data, low: int, high: int) -> int:
    """The largest ``n`` in ``[low, high]`` for which ``data(n)`` is an accepted config (accepted up to it)."""
    assert accepted(data(low))
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if accepted(data(middle)) else (low, middle - 1)
    return low


@pytest.mark.parametrize("opponents", [["greedy", "planner"], ["planner:" + "x" * 200] * 8])
def test_the_largest_ppo_history_accepted_fits_the_state_its_resume_reads(opponents):
    """An evaluation every step of the most steps accepted: the ``state.json`` of that history (every number at its
    widest) fits the cap a resume reads (issue 39: the history grows with total_timesteps / every_steps)."""
    from training.checkpoint import compact_json
    from training.schema import STEPS
    from training.ppo_sections import PPO_STATE_BYTES, ppo_state_bytes
    from training.state_checks import MAX_STATE_BYTES

    def data(steps):
        return {"budget": {"total_timesteps": steps}, "evaluation": {"every_steps": 1, "opponents": opponents},
                "opponents": {"max_snapshots": 1000}}

    steps = largest_accepted(data, 1, int(STEPS.max))
    assert steps < STEPS.max  # the state cap binds, not the steps'
    config = config_from_dict(data(steps))
    point = {"timesteps": int(STEPS.max), "wall_seconds": 31_536_000.1, "seconds": 31_536_000.1,
             "results": {name: {key: value for key, value in widest_stats([]).items() if key != "others"}
                         for name in opponents}}
    history = [point] * (steps + 2)
    state = {"timesteps": int(STEPS.max), "updates": int(STEPS.max), "wall_seconds": 31_536_000.1,
             "snapshot_steps": [int(STEPS.max)] * 1000, "history": history, "best": {"score": WIDEST_RATE,
                                                                                     "timesteps": int(STEPS.max)}}
    written = len(compact_json(state))
    assert written <= ppo_state_bytes(config) - PPO_STATE_BYTES + 1024
    assert ppo_state_bytes(config) <= MAX_STATE_BYTES
    with pytest.raises(ConfigError, match=r"^budget\.total_timesteps=.* evaluation history .* state\.json would "
                                          r"take up to .* MiB, more than the 64 MiB a resume reads"):
        config_from_dict(data(steps + 1))


def test_the_largest_snes_run_by_minutes_writes_a_state_its_resume_reads():
    """With only ``budget.max_minutes`` set an sNES run stops at the most generations the schema allows; the
    ``state.json`` of that run (a curve point every generation, the most tables accepted, every number at its
    widest, a Ray cluster of 32 nodes) fits the cap a resume reads, and a config past it is refused."""
    from agents.learned_parameters import NUM_PARAMETERS
    from training.checkpoint import compact_json
    from training.schema import GENERATIONS
    from training.snes.config import generation_limit, state_bytes
    from training.state_checks import MAX_STATE_BYTES

    table = ["pretrained-2p"]

    def data(tables):
        return {"backend": "snes", "budget": {"max_minutes": 60},
                "snes": {"curve_every": 1, "tables": [table] * tables}}

    tables = largest_accepted(data, 1, 512)
    assert tables < 512
    settings = config_from_dict(data(tables)).snes
    generations = generation_limit(settings)
    assert generations == GENERATIONS.max
    mean = [WIDEST_FLOAT] * NUM_PARAMETERS
    nodes = {f"10.{index}.255.255": 10**7 for index in range(32)}
    entry = {"generation": generations, "best_fitness": WIDEST_RATE, "mean_fitness": WIDEST_RATE, "refused": 1024,
             "mean_by_table": {"+".join(table): WIDEST_RATE for table in settings.tables}, "nodes": nodes}
    point = {"timesteps": 10**15, "generation": generations, "wall_seconds": 31_536_000.1,
             "results": {"+".join(seats): widest_stats(seats) for seats in settings.curve_tables}}
    state = {"generation": generations, "games": 10**15, "wall_seconds": 31_536_000.1, "mu": mean, "sigma": mean,
             "archive": [mean] * (generations + 1), "log": [entry] * generations,
             "history": [point] * (generations + 1), "evaluation": point["results"],
             "rng": {"bit_generator": "PCG64", "state": {"state": 2**128 - 1, "inc": 2**128 - 1},
                     "has_uint32": 0, "uinteger": 2**32 - 1}}
    assert len(compact_json(state)) <= state_bytes(settings) <= MAX_STATE_BYTES
    with pytest.raises(ConfigError, match=r"^snes\.tables and snes\.curve_tables .* state\.json would take up to"):
        config_from_dict(data(tables + 1))
