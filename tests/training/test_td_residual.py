"""The teacher start's residual model (agents/batched/residual.py, training/td/residual.py): with its correction at
zero it plays exactly the teacher's moves; with a correction its kernel values a stop and chooses a discard as a
plain numpy computation of the formula says, and the float model it is fitted as agrees with the kernel."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from agents.batched.expert import ODDS_ROW, discard_scores
from agents.batched.learned import learned_actions, learned_view, position_features
from agents.batched.neural import (
    FIRST_SHIFT, OUTPUT_UNIT, SECOND_SHIFT, decision_arrays, turn_end_inputs,
)
from agents.batched.neural_teacher import decision_roots
from agents.batched.residual import (
    FEATURE_UNIT, candidate_rows, drawn_actions, observed_view, residual_actions, root_logits, turn_records,
)
from agents.learned_parameters import NUM_FEATURES
from agents.planner_weights import STOCK
from skipbo_env.actions import END_TURN, FIRST_DISCARD
from skipbo_env.rules import Rules
from skipbo_env.vector import VectorGame
from skipbo_env.vector.jit import jit
from agents.loading import load_policy
from agents.residual import MAX_SEARCH_TOP, ResidualBot, teacher_parameters
from evaluation import run_tournament
from training.td.residual import CORRECTION_UNIT, ResidualNet, ResidualPlayer, kernel_model, residual_document

RULES = Rules(num_players=2, stock_size=30)


def corrected_net(seed: int = 3, bound: float = 0.0) -> ResidualNet:
    """A residual model whose correction is not zero (its output layer set by hand) and whose numbers are not
    their first ones (``bound``: its ``td.correction_bound``)."""
    torch.manual_seed(seed)
    net = ResidualNet(2, (16, 8), correction_bound=bound)
    with torch.no_grad():
        net.output.weight.normal_(0.0, 2.0)
        net.output.bias.fill_(-0.3)
        net.log_a.fill_(np.log(0.01))
        net.b.fill_(0.25)
        net.log_a_discard.fill_(np.log(0.2))
        net.baseline[2].weight.normal_(0.0, 1.0)
    return net


def integer_correction(network, rows: np.ndarray, bound: float = 0.0) -> np.ndarray:
    """``r`` of integer rows (inputs then features) in plain numpy: the kernels' fixed-point arithmetic, then
    ``bound * tanh(r / bound)`` where ``bound`` > 0 (in ``r``'s units)."""
    first, first_bias, second, second_bias, output, output_bias, _ = network.arrays
    sums = rows.astype(np.int64) @ first + first_bias
    hidden = np.maximum(sums, 0) >> FIRST_SHIFT
    hidden = np.maximum(hidden @ second.T + second_bias, 0) >> SECOND_SHIFT
    r = (hidden @ output + output_bias[0]) * OUTPUT_UNIT
    return bound * np.tanh(r / bound) if bound > 0 else r


@jit
def stop_and_turn_ends(games, legal, cfg, g, parameters, x, net, turn_ends, scores):
    """The inputs of every legal discard's turn end (``turn_ends[action - FIRST_DISCARD]``) and its score."""
    needs, hand, piles, heights, info, chances, buffer = learned_view(games[g], cfg, parameters)
    discard_scores(legal, g, needs, hand, piles, heights, info, chances[ODDS_ROW], parameters[NUM_FEATURES:], scores)
    view_needs, view_hand, view_piles, view_heights, view_info, root = decision_arrays(x, net)
    for action in range(FIRST_DISCARD, END_TURN):
        if legal[g, action]:
            turn_end_inputs(action, view_needs, view_hand, view_piles, view_heights, view_info, net, root,
                            turn_ends[action - FIRST_DISCARD])


def play_checked(hands: int, seed: int, check) -> int:
    """Play ``hands`` two-player hands of the teacher in every seat, calling ``check(engine, rows, observations,
    teacher_actions)`` at every step; the decisions seen."""
    parameters = teacher_parameters()
    engine = VectorGame(RULES, hands, seed=seed, auto_reset=False, threads=1)
    decisions = 0
    while not engine.over.all():
        rows = np.flatnonzero(~engine.over)
        observations = engine.observe(rows)
        teacher = np.empty(len(rows), dtype=np.int64)
        learned_actions(engine.games, engine.action_mask, engine.cfg, rows, parameters, teacher)
        check(engine, rows, observations, teacher)
        decisions += len(rows)
        engine.step_rows(rows, teacher)
    engine.close()
    return decisions


def test_the_residual_bot_with_a_zero_correction_makes_the_teachers_moves():
    player = ResidualPlayer(ResidualNet(2, (32, 8)))
    assert not player.bot.network.arrays[4].any()
    differing = []

    def check(engine, rows, observations, teacher):
        chosen = np.empty(len(rows), dtype=np.int64)
        player.decide(engine, rows, observations, None, chosen)
        differing.extend(np.flatnonzero(chosen != teacher).tolist())

    assert play_checked(3, 11, check) >= 500
    assert differing == []


@pytest.mark.parametrize("bound", [0.0, 3.0])
def test_a_corrected_stop_and_discard_are_the_formulas_and_the_float_models(bound):
    net = corrected_net(bound=bound)
    network, scales = kernel_model(net)
    a, b, a_discard, c, r_bound = scales
    assert r_bound == bound / CORRECTION_UNIT
    parameters = teacher_parameters()
    weights = parameters[:NUM_FEATURES]
    seen = {"stops": 0, "discards": 0, "moved": 0, "past the bound": 0}

    def check(engine, rows, observations, teacher):
        # the root stop: inputs (the neural bot's), features and value (the learned bot's), by their own kernels
        inputs = np.zeros((len(rows), network.arrays[0].shape[0]), dtype=np.int64)
        decision_roots(observations, network.arrays, inputs)
        features = np.zeros(NUM_FEATURES)
        for i, g in enumerate(rows):
            position_features(engine.games[g], engine.action_mask, g, engine.cfg, features)
            inputs[i, -NUM_FEATURES:] = np.rint(features * FEATURE_UNIT)
            value = STOCK * float(weights @ features)
            correction = integer_correction(network, inputs[i:i + 1], r_bound)[0]
            expected = a * value + b + c * correction
            if bound:  # within ±bound of the teacher's units, however large r itself
                assert abs(correction * c / a) < bound
                seen["past the bound"] += abs(integer_correction(network, inputs[i:i + 1])[0] * c / a) > bound
            kernel = np.empty(1)
            root_logits(engine.games, engine.action_mask, engine.cfg, rows[i:i + 1], parameters, observations[i:i + 1],
                        network.arrays, scales, kernel)
            assert kernel[0] == pytest.approx(expected, rel=1e-9, abs=1e-9)
            start = inputs[0]  # another decision's block as the turn's start: r enters as its change from there
            float_row = torch.as_tensor(np.concatenate([inputs[i], [value, 0.0], start])[None, :])
            with torch.no_grad():  # the float model adds what the search's stops share: -c r(start) + baseline
                shared = (float(net.turn_start_value(float_row)[0])
                          - c * integer_correction(network, start[None], r_bound)[0])
                assert float(net(float_row)[0]) == pytest.approx(expected + shared, abs=0.02)
            seen["stops"] += 1
        chosen = np.empty(len(rows), dtype=np.int64)
        residual_actions(engine.games, engine.action_mask, engine.cfg, rows, parameters, observations, network.arrays,
                         scales, 0, chosen)
        seen["moved"] += int((chosen != teacher).sum())
        for i in np.flatnonzero((chosen >= FIRST_DISCARD) & (chosen < END_TURN)):
            # a discard: the legal one of the best s + c r(turn end) / a_d, each turn end by the neural bot's kernel
            g = rows[i]
            turn_ends = np.zeros((END_TURN - FIRST_DISCARD, inputs.shape[1]), dtype=np.int64)
            scores = np.zeros(END_TURN - FIRST_DISCARD)
            stop_and_turn_ends(engine.games, engine.action_mask, engine.cfg, g, parameters, observations[i],
                               network.arrays, turn_ends, scores)
            legal = np.flatnonzero(engine.action_mask[g, FIRST_DISCARD:END_TURN])
            turn_ends[:, -NUM_FEATURES:] = inputs[i, -NUM_FEATURES:]
            worth = scores[legal] + c * integer_correction(network, turn_ends[legal], r_bound) / a_discard
            assert chosen[i] == FIRST_DISCARD + legal[np.argmax(worth)]  # ties: the lowest id, as argmax
            # what learning records of it: the stop's and the turn end's rows, v and s
            records = np.zeros((1, 2, inputs.shape[1]), dtype=np.int64)
            values = np.zeros((1, 2))
            turn_records(engine.games, engine.action_mask, engine.cfg, rows[i:i + 1], parameters, observations[i:i + 1],
                         network.arrays, chosen[i:i + 1], records, values)
            assert (records[0, 0] == inputs[i]).all()
            assert (records[0, 1] == turn_ends[chosen[i] - FIRST_DISCARD]).all()
            assert values[0, 1] == scores[chosen[i] - FIRST_DISCARD]
            assert values[0, 0] == pytest.approx(STOCK * float(weights @ (inputs[i, -NUM_FEATURES:] / FEATURE_UNIT)),
                                                 abs=STOCK * np.abs(weights).sum() / FEATURE_UNIT)
            seen["discards"] += 1

    play_checked(1, 7, check)
    assert seen["stops"] >= 100 and seen["discards"] >= 10
    assert seen["moved"] > 0  # the correction changes moves: the checks above are not the teacher's own
    if bound:
        assert seen["past the bound"] > 0  # the bound held where it mattered


def test_ranking_the_teachers_best_stops_only():
    net = corrected_net()
    network, scales = kernel_model(net)
    parameters = teacher_parameters()
    seen = {"plays": 0, "all moved": 0}

    def actions(engine, rows, observations, top):
        out = np.empty(len(rows), dtype=np.int64)
        residual_actions(engine.games, engine.action_mask, engine.cfg, rows, parameters, observations, network.arrays,
                         scales, top, out)
        return out

    def check(engine, rows, observations, teacher):
        every, best_one, most = (actions(engine, rows, observations, top) for top in (0, 1, MAX_SEARCH_TOP))
        # the teacher's best stop alone: its plays, and its choice to stop (the discard is still corrected)
        assert (best_one[teacher < FIRST_DISCARD] == teacher[teacher < FIRST_DISCARD]).all()
        assert (best_one[teacher >= FIRST_DISCARD] >= FIRST_DISCARD).all()
        # room for every stop of these decisions: the search over all of them
        assert (most == every).all()
        seen["plays"] += int((teacher < FIRST_DISCARD).sum())
        seen["all moved"] += int(((every != teacher) & (teacher < FIRST_DISCARD)).sum())

    play_checked(1, 7, check)
    assert seen["plays"] >= 100 and seen["all moved"] > 0  # the correction moves plays where every stop is ranked


@pytest.mark.parametrize("bound", [0.0, 3.0])
def test_the_kept_stops_as_learning_reads_them_and_a_drawn_move_toward_each(bound):
    network, scales = kernel_model(corrected_net(bound=bound))
    a, b, a_discard, c, r_bound = scales
    parameters, top, width = teacher_parameters(), 8, network.arrays[0].shape[0]
    seen = {"decisions": 0, "discards": 0, "out of reach": 0}

    def check(engine, rows, observations, teacher):
        blocks = np.zeros((len(rows), top, width), dtype=np.int64)
        values, firsts = np.zeros((len(rows), top)), np.zeros((len(rows), top), dtype=np.int64)
        counts = np.zeros(len(rows), dtype=np.int64)
        candidate_rows(engine.games, engine.action_mask, engine.cfg, rows, parameters, observations, network.arrays,
                       top, blocks, values, firsts, counts)
        chosen = np.empty(len(rows), dtype=np.int64)
        residual_actions(engine.games, engine.action_mask, engine.cfg, rows, parameters, observations, network.arrays,
                         scales, top, chosen)
        for i in np.flatnonzero(counts):
            kept = counts[i]
            # the best of every kept stop: with a bound the kernel values only those r could lift to the best
            worth = values[i, :kept] + integer_correction(network, blocks[i, :kept], r_bound) * c / a
            best = 0
            for k in range(1, kept):  # the earliest found among ties, as the kernel
                best = k if worth[k] > worth[best] + 1e-9 else best
            drawn = np.empty(1, dtype=np.int64)
            for k in (best, *range(kept)):
                if k != best:
                    drawn_actions(engine.games, engine.action_mask, engine.cfg, rows[i:i + 1], parameters,
                                  observations[i:i + 1], network.arrays, scales, top, np.array([k]), drawn)
                move = chosen[i] if k == best else drawn[0]
                assert move == firsts[i, k] if firsts[i, k] >= 0 else move >= FIRST_DISCARD
            by_v = 0
            for k in range(1, kept):
                by_v = k if values[i, k] > values[i, by_v] + 1e-9 else by_v
            assert firsts[i, by_v] == (teacher[i] if teacher[i] < FIRST_DISCARD else -1)  # the teacher's own stop
            seen["decisions"] += 1
            seen["discards"] += int((firsts[i, :kept] < 0).any())
            seen["out of reach"] += bound and bool((values[i, :kept] + 2 * bound < values[i, :kept].max()).any())

    play_checked(1, 9, check)
    assert seen["decisions"] >= 50 and seen["discards"] > 0
    assert seen["out of reach"] > 0 if bound else seen["out of reach"] == 0  # stops the kernel did not value


def test_the_float_model_starts_at_the_teachers_value():
    net = ResidualNet(2, (32, 8))
    rows = torch.as_tensor(np.random.default_rng(0).integers(0, 64, size=(5, net.row_width)).astype(np.float64))
    with torch.no_grad():
        a, b, a_discard, c, _ = net.scales()
        expected = a * rows[:, net.block] + b + a_discard * rows[:, net.block + 1]
        assert torch.allclose(net(rows), expected.to(torch.float32))
        assert c / a == pytest.approx(CORRECTION_UNIT)


def test_the_baseline_changes_the_fitted_value_but_not_the_play():
    net, other = corrected_net(), corrected_net()
    with torch.no_grad():
        other.baseline[2].weight.mul_(-3.0)
        other.baseline[2].bias.fill_(1.5)
    rows = torch.as_tensor(np.random.default_rng(1).integers(0, 64, size=(5, net.row_width)).astype(np.float64))
    with torch.no_grad():
        assert not torch.allclose(net(rows), other(rows))
    (network, scales), (other_network, other_scales) = kernel_model(net), kernel_model(other)
    assert (scales == other_scales).all()
    assert all((x == y).all() for x, y in zip(network.arrays, other_network.arrays))


def test_the_baseline_reads_the_turn_start_only_and_r_enters_as_its_change_from_there():
    net = corrected_net()
    rows = torch.as_tensor(np.random.default_rng(2).integers(0, 64, size=(5, net.row_width)).astype(np.float64))
    at_start = rows.clone()
    at_start[:, net.block + 2:] = rows[:, :net.block]  # the position is its turn's start
    with torch.no_grad():
        a, b, a_discard, c, _ = net.scales()
        teacher = a * rows[:, net.block] + b + a_discard * rows[:, net.block + 1]
        assert torch.allclose(net(at_start), (teacher + net.turn_start_value(at_start)).to(torch.float32), atol=1e-5)
        moved = rows.clone()
        moved[:, :net.block] += 1  # another position, the same turn start: the baseline stays
        assert torch.equal(net.turn_start_value(moved), net.turn_start_value(rows))
        assert not torch.allclose(net(moved), net(rows))


def write_model(path, net: ResidualNet, **changes) -> str:
    document = {**residual_document(net), **changes}
    path.write_text(json.dumps(document))
    return str(path)


def test_a_model_file_loads_through_load_policy_and_plays_on_the_batched_engine(tmp_path):
    net = corrected_net()
    bot = load_policy(f"residual:model={write_model(tmp_path / 'model.json', net)}")
    network, scales = kernel_model(net)
    assert isinstance(bot, ResidualBot) and (bot.scales == scales).all() and bot.search_top == 0
    net.search_top = 8
    assert load_policy(f"residual:model={write_model(tmp_path / 'top.json', net)}").search_top == 8
    bounded = load_policy(f"residual:model={write_model(tmp_path / 'bound.json', corrected_net(bound=2.0))}")
    assert bounded.scales[-1] == pytest.approx(0.2) and bot.scales[-1] == 0.0  # in r's units; 0: no bound
    assert all((a == b).all() for a, b in zip(bot.network.arrays, network.arrays))
    zero = write_model(tmp_path / "zero.json", ResidualNet(2, (16, 8)))
    result = run_tournament([f"residual:model={zero}", "pretrained-2p"], RULES, 4, 5, names=["zero", "teacher"],
                            engine="auto")
    assert result.engine == "vector" and len(result.games) == 4
    assert result.agent_stats()["zero"]["wins"] == 2  # the teacher's own moves: each deal won once by each seat


@pytest.mark.parametrize("top", [0, 8])
def test_the_rules_engine_twin_reads_the_teachers_view_from_the_observation_and_moves_the_same(tmp_path, top):
    net = corrected_net()
    net.search_top = top
    bot = ResidualBot.of(*kernel_model(net), search_top=top)
    parameters = teacher_parameters()
    seen = {"decisions": 0}

    def check(engine, rows, observations, teacher):
        kernel = bot.act_rows(engine, rows, observations)
        for i, g in enumerate(rows):
            record_view = learned_view(engine.games[g], engine.cfg, parameters)
            for ours, theirs in zip(observed_view(observations[i], parameters), record_view):
                assert np.array_equal(ours, theirs)
            assert bot.act({"observation": observations[i], "action_mask": engine.action_mask[g]}) == kernel[i]
        seen["decisions"] += len(rows)

    play_checked(1, 5, check)
    assert seen["decisions"] >= 200
    model = write_model(tmp_path / "model.json", net)
    games = [run_tournament([f"residual:model={model}", "pretrained-2p"], Rules(num_players=2, stock_size=10), 6, 3,
                            engine=engine).to_json()["games"] for engine in ("python", "vector")]
    assert games[0] == games[1]


@pytest.mark.parametrize("changes, message", [
    ({"format": "skipbo-neural/1"}, 'expected a JSON object with "format": "skipbo-residual/2"'),
    ({"teacher": "learned-4p"}, "teacher must be 'learned-2p'"),
    ({"scales": [0.0, 0.0, 1.0, 1.0]}, r"scales must be \[a, b, a_d, c\].*all but b > 0"),
    ({"scales": [1.0, 0.0, 1.0, -1.0]}, "all but b > 0"),
    ({"scales": [1.0, 0.0, 1.0]}, r"scales must be \[a, b, a_d, c\]"),
    ({"format": "skipbo-residual/1"}, r"scales must be \[a, b, a_d\]"),
    ({"scales": [1.0, float("nan"), 1.0, 1.0]}, "finite numbers"),
    ({"feature_first": [[1] * 16] * 3}, r"feature_first must be a list of integers of shape \[16, 16\]"),
    ({"feature_first": [[2 ** 40] * 16] * 16}, "too large to be summed exactly"),
    ({"search_top": -1}, "search_top must be an integer from 0"),
    ({"search_top": 2.5}, "search_top must be an integer from 0"),
    ({"search_top": MAX_SEARCH_TOP + 1}, f"search_top must be an integer from 0 .every stop. to {MAX_SEARCH_TOP}"),
    ({"bound": -0.5}, r"bound must be a number from 0 \(no bound\) to 1e\+06"),
    ({"bound": float("inf")}, "bound must be a number from 0"),
    ({"bound": True}, "bound must be a number from 0"),
    ({"bound": "0.1"}, "bound must be a number from 0"),
])
def test_a_model_file_that_is_not_a_residual_model_is_refused_in_one_line(tmp_path, changes, message):
    path = write_model(tmp_path / "bad.json", ResidualNet(2, (16, 8)), **changes)
    with pytest.raises(ValueError, match=message) as error:
        load_policy(f"residual:model={path}")
    assert "\n" not in str(error.value)


def test_a_first_format_file_reads_as_a_correction_of_weight_one(tmp_path):
    document = residual_document(corrected_net())
    a, b, a_discard, _ = document["scales"]
    path = write_model(tmp_path / "first.json", corrected_net(), format="skipbo-residual/1", scales=[a, b, a_discard])
    assert load_policy(f"residual:model={path}").scales.tolist() == [a, b, a_discard, 1.0, 0.0]
