"""``training.td``: self-play hands give every seat's stops and turn ends their λ-returns, the fit moves the
network toward them, a kernel bot's or a snapshot's share of the hands seats it, the pool keeps the newest
snapshots, and a restored run (its pool too) ends with the weights of an uninterrupted one."""

from __future__ import annotations

import io
import json
import threading

import numpy as np
import pytest
import torch

from skipbo_env.vector import VectorGame
from training.state_checks import CheckpointError
from training.td import learner
from training.td.config import file_sizes
from training.td.learner import TDRun, TDSettings
from training.td.state import LEARNER_FILE, read_learner_arrays

TINY = TDSettings(stock_size=3, hidden=(8, 4), hands=4, explore=0.1, minibatch=64, seed=5)
LEAGUE = TDSettings(**{**TINY.__dict__, "opponents": {"self": 0.5, "snapshots": 0.5}, "snapshot_every": 4,
                       "max_snapshots": 2})
"""A snapshot after every iteration, two kept."""
TEACHER = TDSettings(**{**LEAGUE.__dict__, "start": "teacher"})
"""The residual over the teacher's value, with a league."""
RANKED = TDSettings(**{**TEACHER.__dict__, "stock_size": 5, "search_top": 4, "rank_share": 0.5, "explore": 0.0})
"""The teacher start whose correction learns from moves drawn among the teacher's 4 best stops."""
TURN = TDSettings(**{**LEAGUE.__dict__, "turn_baseline": True, "lam": 0.8})
"""The scratch start valued from the turn's start, bootstrapping, with a league."""
STEPPED = TDSettings(**{**TEACHER.__dict__, "learning_rate_after": {8: 1e-4, 12: 1e-5}})
"""The teacher start with a step schedule: Adam's step 1e-4 from 8 hands on, 1e-5 from 12."""
CHUNKED = TDSettings(**{**RANKED.__dict__, "chunk": 3, "threads": 2})
"""The drawn moves' run with its hands in two parts (3 and 1), each drawing from its own generator."""
UNDRAWN = TDSettings(**{**RANKED.__dict__, "rank_share": 1e-9})
"""The drawn moves' run that draws none: Adam has not stepped the correction when the state is saved."""


def weights(run: TDRun) -> list[np.ndarray]:
    return [p.detach().numpy().copy() for p in run.net.parameters()]


def loss(run: TDRun, inputs: np.ndarray, targets: np.ndarray) -> float:
    """The network's binary cross-entropy on recorded positions and their returns."""
    with torch.no_grad():
        return torch.nn.functional.binary_cross_entropy_with_logits(
            run.net(torch.as_tensor(inputs)), torch.as_tensor(targets, dtype=torch.float32)).item()


def fitted_loss(run: TDRun, inputs: np.ndarray, targets: np.ndarray, passes: int) -> float:
    """The loss after ``passes`` fits to the positions."""
    for _ in range(passes):
        run.fit(inputs, targets)
    return loss(run, inputs, targets)


def test_an_iteration_records_two_positions_a_turn_and_fits_toward_the_results():
    run = TDRun(TINY)
    sequences, results = run.play()
    assert {hand for hand, _ in sequences} == set(range(TINY.hands))
    assert all(len(positions) % 2 == 0 and len(positions) >= 2 for positions in sequences.values())
    assert set(np.unique(results)) <= {0.0, 0.5, 1.0} and (results.sum(axis=1) <= 1).all()
    inputs, targets, _ = run.returns(sequences, results)
    first = sorted(sequences)[0]
    assert (targets[:len(sequences[first])] == results[first]).all()  # λ = 1: every position gets the result
    assert (inputs[0] == sequences[first][0]).all() and inputs[0][-1] == 1 and inputs[1][-1] == 0  # stop, turn end
    before = loss(run, inputs, targets)
    assert fitted_loss(run, inputs, targets, 20) < before


def test_lambda_below_one_bootstraps_from_the_next_position():
    run = TDRun(TDSettings(**{**TINY.__dict__, "lam": 0.0}))
    sequences = {(0, 0): [np.zeros(len(run.net.inputs), dtype=np.int64)] * 3}
    _, targets, _ = run.returns(sequences, np.array([[1.0, 0.0]]))
    with torch.no_grad():
        chance = torch.sigmoid(run.net(torch.zeros((1, len(run.net.inputs)), dtype=torch.int64))).item()
    assert targets[2] == 1.0 and targets[:2] == pytest.approx([chance, chance], abs=1e-6)


@pytest.mark.parametrize("settings, before", [(TINY, 1), (LEAGUE, 3), (TEACHER, 3), (TURN, 3), (RANKED, 2),
                                              (STEPPED, 3), (CHUNKED, 2), (UNDRAWN, 1)],
                         ids=["scratch", "league", "teacher", "turn-baseline", "drawn-moves", "step-schedule",
                              "parts", "nothing-drawn-yet"])
def test_a_restored_run_has_the_weights_of_an_uninterrupted_one(tmp_path, settings, before):
    straight = TDRun(settings)
    for _ in range(before + 2):
        straight.iterate()
    interrupted = TDRun(settings)
    for _ in range(before):
        interrupted.iterate()
    data, fields = interrupted.state_arrays(), json.loads(json.dumps(interrupted.state_fields()))
    (tmp_path / LEARNER_FILE).write_bytes(data)
    resumed = TDRun(settings)
    resumed.restore(read_learner_arrays(tmp_path / LEARNER_FILE, resumed, len(fields["snapshot_hands"])), fields)
    assert resumed.hands_played == before * settings.hands and resumed.iterations == before
    assert [s.hands for s in resumed.pool] == [s.hands for s in interrupted.pool] == fields["snapshot_hands"]
    assert all((x.player.arrays[i] == y.player.arrays[i]).all() for x, y in zip(resumed.pool, interrupted.pool)
               for i in range(7) if settings.start == "scratch")
    torch.manual_seed(123)  # the restored run's torch generator comes from its state, not from here
    resumed.iterate()
    resumed.iterate()
    assert all((a == b).all() for a, b in zip(weights(straight), weights(resumed)))
    assert resumed.hands_played == straight.hands_played == (before + 2) * settings.hands
    assert [s.hands for s in resumed.pool] == [s.hands for s in straight.pool]
    assert len(data) < 1_000_000


def test_a_state_saved_before_adam_stepped_the_correction_is_read_and_a_partial_set_of_moments_is_not(tmp_path):
    run = TDRun(UNDRAWN)
    run.iterate()
    arrays = dict(np.load(io.BytesIO(run.state_arrays())))
    stepped = {name.split(".")[1] for name in arrays if name.startswith("optimizer.")}
    assert not run.drawn and 0 < len(stepped) < len(list(run.net.parameters()))
    path = tmp_path / LEARNER_FILE
    path.write_bytes(run.state_arrays())
    assert set(read_learner_arrays(path, TDRun(UNDRAWN), len(run.pool))) == set(arrays)
    del arrays["optimizer.0.exp_avg"]
    np.savez(path.open("wb"), **arrays)
    with pytest.raises(CheckpointError, match=r"'optimizer\.0\.exp_avg' is missing"):
        read_learner_arrays(path, TDRun(UNDRAWN), len(run.pool))


@pytest.mark.parametrize("settings", [LEAGUE, RANKED], ids=["scratch", "teacher"])
def test_a_checkpoints_arrays_take_no_more_than_the_config_check_counts(settings):
    run = TDRun(settings)
    for _ in range(3):
        run.iterate()
    assert len(run.pool) == settings.max_snapshots and len(run.optimizer.state_dict()["state"]) == len(
        list(run.net.parameters()))
    _, bound = file_sizes(list(settings.hidden), settings.num_players, settings.max_snapshots, settings.start,
                          settings.turn_baseline)
    assert len(run.state_arrays()) <= bound


@pytest.mark.parametrize("start", ["scratch", "teacher"])
def test_a_part_whose_snapshots_move_first_in_every_hand_records_only_the_learners_turns(start):
    settings = TDSettings(**{**(TEACHER if start == "teacher" else LEAGUE).__dict__, "opponents": {"snapshots": 1.0}})
    run = TDRun(settings)
    run.add_snapshot(0, {name: value.clone() for name, value in run.net.state_dict().items()})
    controllers, learner_seat, opponent = run.seating()
    first_hand = 0
    rules = run.iteration_rules()
    starting = VectorGame(rules, settings.hands, seed=first_hand, auto_reset=False).games["seat"].copy()
    learner_seat[:] = (starting + 1) % settings.num_players  # the snapshot moves first in every hand
    part = learner.play_part(settings, rules, run.player(), [run.pool[0].player], first_hand,
                             (controllers, learner_seat, opponent), np.random.default_rng(0), 1)
    assert all(seat == learner_seat[hand] for hand, seat in part.sequences)
    assert {hand for hand, _ in part.sequences} == set(range(settings.hands))


BATCH = {"hands": 32, "opponents": {"self": 0.5, "greedy": 0.25, "snapshots": 0.25}}
"""Enough hands a batch for two kernel threads, a kernel bot and snapshots among the opponents."""


@pytest.mark.parametrize("settings", [TDSettings(**{**LEAGUE.__dict__, **BATCH}),
                                      TDSettings(**{**RANKED.__dict__, **BATCH})], ids=["scratch", "teacher"])
def test_two_kernel_threads_play_the_same_hands_and_fit_the_same_weights(settings, monkeypatch):
    split = []
    run_parts = learner.VectorGame.run_parts

    def recorded(engine, function, count, *args, **kwargs):
        parts = run_parts(engine, function, count, *args, **kwargs)
        split.append(len(parts))
        return parts

    monkeypatch.setattr(learner.VectorGame, "run_parts", recorded)
    runs = [TDRun(TDSettings(**{**settings.__dict__, "threads": threads})) for threads in (1, 2)]
    for run in runs:
        for _ in range(2):  # the second against snapshots too
            run.iterate()
    assert max(split) == 2  # the searches did run on two threads
    assert runs[0].positions_fitted == runs[1].positions_fitted and len(runs[1].pool) == 2
    assert all(np.array_equal(a, b) for a, b in zip(weights(runs[0]), weights(runs[1])))


def test_a_batch_in_parts_plays_the_hands_of_the_whole_batch():
    assert learner.part_bounds(32, 12) == [(0, 12), (12, 24), (24, 32)] and learner.part_bounds(5, 0) == [(0, 5)]
    settings = TDSettings(**{**TEACHER.__dict__, **BATCH, "explore": 0.0})  # nothing drawn: the parts' generators
    whole_sequences, whole_results = TDRun(settings).play()              # do not matter
    sequences, results = TDRun(TDSettings(**{**settings.__dict__, "chunk": 12})).play()
    assert sorted(sequences) == sorted(whole_sequences) and max(hand for hand, _ in sequences) >= 24
    assert all(np.array_equal(np.asarray(sequences[key]), np.asarray(whole_sequences[key])) for key in sequences)
    assert np.array_equal(results, whole_results)


def test_parts_on_two_threads_draw_the_same_moves_and_fit_the_same_weights(monkeypatch):
    settings = TDSettings(**{**RANKED.__dict__, **BATCH, "hands": 16, "chunk": 8})
    names: list[str] = []
    play_part = learner.play_part

    def recorded(*args):
        names.append(threading.current_thread().name)
        return play_part(*args)

    monkeypatch.setattr(learner, "play_part", recorded)
    runs = [TDRun(TDSettings(**{**settings.__dict__, "threads": threads})) for threads in (1, 2)]
    for run in runs:
        for _ in range(2):  # the second against snapshots too
            run.iterate()
    assert len(names) == 8 and len({name[-2:] for name in names[4:]}) == 2  # two parts, two threads
    assert runs[0].positions_fitted == runs[1].positions_fitted
    assert [d.hand for d in runs[0].drawn] == [d.hand for d in runs[1].drawn] and max(d.hand for d in runs[0].drawn) >= 8
    assert all(np.array_equal(a, b) for a, b in zip(weights(runs[0]), weights(runs[1])))


def test_a_part_handed_read_only_arrays_as_ray_does_plays_them_on_the_kernels_compiled_for_writeable_ones():
    from agents.batched.residual import residual_actions

    run = TDRun(TDSettings(**{**TEACHER.__dict__, "chunk": 2}))
    player, seating = run.player(), run.seating()
    for array in [*player.bot.network.arrays, player.bot.scales, player.bot.parameters, *seating]:
        array.setflags(write=False)
    part = learner.play_work_item((run.settings, run.rules, player, []), (0, seating, 7))
    assert part.sequences and part.cpu_seconds > 0
    assert not any("readonly" in str(kind) for signature in residual_actions.signatures for kind in signature)


def test_a_snapshot_share_seats_the_network_once_and_a_snapshot_in_the_other_seats(monkeypatch):
    run = TDRun(LEAGUE)
    assert run.settings.tables() == ["self", "self", "snapshots", "snapshots"]
    sequences, _ = run.play()  # an empty pool: the snapshot hands are self-play hands
    assert {seat for hand, seat in sequences if hand >= 2} == {0, 1} and not run.pool
    run.iterate()
    assert [s.hands for s in run.pool] == [4]
    snapshot = run.pool[0].player.arrays
    played: list[bool] = []  # per call of the kernel: whether it played the snapshot's arrays
    decide = learner.decide_rows

    def recording(observations, masks, net, out):
        played.append(net is snapshot)
        decide(observations, masks, net, out)

    monkeypatch.setattr(learner, "decide_rows", recording)
    sequences, _ = run.play()
    seats = {hand: {seat for h, seat in sequences if h == hand} for hand in range(LEAGUE.hands)}
    assert seats[0] == seats[1] == {0, 1} and seats[2] == {1} and seats[3] == {0}  # iteration 1: hand 2 seat 1
    assert True in played and False in played


def test_the_pool_keeps_the_newest_max_snapshots():
    run = TDRun(LEAGUE)
    for _ in range(4):
        run.iterate()
    assert [s.hands for s in run.pool] == [12, 16] and run.state_fields()["snapshot_hands"] == [12, 16]
    newest = run.net.state_dict()
    assert all((run.pool[-1].weights[name] == newest[name]).all() for name in newest)
    assert all(not (run.pool[0].weights[name] == newest[name]).all() for name in ("output.weight",))
    assert sum(name.startswith("snapshot.") for name in np.load(io.BytesIO(run.state_arrays())).files) == 2 * len(run.net.state_dict())
    no_pool = TDRun(TDSettings(**{**LEAGUE.__dict__, "opponents": {"self": 1.0}}))
    no_pool.iterate()
    assert not no_pool.pool


def test_a_kernel_bot_share_seats_the_network_once_in_those_hands():
    run = TDRun(TDSettings(**{**TINY.__dict__, "opponents": {"self": 0.5, "greedy": 0.5}}))
    assert run.settings.tables() == ["self", "self", "greedy", "greedy"]
    sequences, _ = run.play()
    seats = {hand: {seat for h, seat in sequences if h == hand} for hand in range(TINY.hands)}
    assert seats[0] == seats[1] == {0, 1} and seats[2] == {0} and seats[3] == {1}


def test_a_step_schedule_sets_adams_step_from_its_hands_on_keeping_the_calibrations_ratio():
    run = TDRun(STEPPED)
    assert [STEPPED.learning_rate_at(hands) for hands in (0, 7, 8, 11, 12, 10**6)] == [
        STEPPED.learning_rate, STEPPED.learning_rate, 1e-4, 1e-4, 1e-5, 1e-5]
    calibration, layers = run.optimizer.param_groups
    ratio = calibration["lr"] / layers["lr"]
    steps = []
    for _ in range(4):  # the fit after 0, 4, 8 and 12 hands played
        run.iterate()
        steps.append(layers["lr"])
        assert calibration["lr"] == pytest.approx(ratio * layers["lr"])
    assert steps == [STEPPED.learning_rate, STEPPED.learning_rate, 1e-4, 1e-5]


def test_stock_sizes_give_the_iterations_their_stockpiles_in_turn():
    run = TDRun(TDSettings(**{**TINY.__dict__, "stock_sizes": (2, 4)}))
    assert run.iteration_rules().stock_size == 2
    run.iterate()
    assert run.iteration_rules().stock_size == 4 and run.rules.stock_size == TINY.stock_size
    run.iterate()
    assert run.iteration_rules().stock_size == 2


def test_the_teacher_start_records_its_values_and_fits_the_correction_and_its_scales():
    run = TDRun(TDSettings(**{**TINY.__dict__, "start": "teacher"}))
    assert not run.net.output.weight.detach().any() and not run.net.output.bias.detach().any()  # r starts at zero
    sequences, results = run.play()
    assert all(len(positions) % 2 == 0 and len(positions) >= 2 for positions in sequences.values())
    inputs, targets, _ = run.returns(sequences, results)
    assert inputs.shape[1] == run.net.row_width and inputs.dtype == np.float64
    block = run.net.block  # the stop block (inputs, then features), v, s, then the turn start's block
    features = block - len(run.net.inputs)
    pending = len(run.net.inputs) - 1  # the last input: pending_discard (1 at a stop, 0 at a turn end)
    assert (inputs[0::2, pending] == 1).all() and (inputs[1::2, pending] == 0).all()
    assert (inputs[0::2, block + 1] == 0).all() and (inputs[0::2, block] == inputs[1::2, block]).all()  # s: turn ends
    assert (inputs[0::2, block - features:block] == inputs[1::2, block - features:block]).all()  # the stop's features
    assert np.abs(inputs[:, block - features:block]).sum() > 0
    starts = inputs[:, block + 2:]
    assert (starts[0::2] == starts[1::2]).all() and (starts[:, pending] == 1).all()  # a turn's, a root stop's block
    assert (starts[0::2] != inputs[0::2, :block]).any(axis=1).any()  # turns whose plays moved the stop from the start
    before = {name: p.detach().clone() for name, p in run.net.named_parameters()}
    run.fit(inputs, targets)
    moved = {name for name, p in run.net.named_parameters() if not torch.equal(before[name], p.detach())}
    assert {"output.weight", "first.weight", "second.weight", "log_a", "b", "log_a_discard", "baseline.0.weight",
            "baseline.2.weight"} <= moved
    assert "output.bias" not in moved  # r's bias cancels in its change from the turn's start


def test_a_turn_start_is_the_block_of_the_seats_first_decision_of_the_turn(monkeypatch):
    run = TDRun(TDSettings(**{**TINY.__dict__, "start": "teacher", "stock_size": 5}))
    player = run.player()
    firsts: dict = {}  # (hand, seat): the block at each turn's first decision, in order
    seen: set = set()

    class Watching:
        def decide(self, engine, rows, observations, masks, out):
            blocks = player.turn_starts(engine, rows, observations)
            for i, g in enumerate(rows):
                key = (int(g), int(engine.games["seat"][g]))
                if (key, int(engine.games["turn"][g])) not in seen:
                    seen.add((key, int(engine.games["turn"][g])))
                    firsts.setdefault(key, []).append(blocks[i])
            player.decide(engine, rows, observations, masks, out)

        def __getattr__(self, name):
            return getattr(player, name)

    monkeypatch.setattr(run, "player", lambda net=None: Watching())
    sequences, _ = run.play()
    block = run.net.block
    checked = 0
    for key, positions in sequences.items():
        recorded = [row[block + 2:] for row in positions[0::2]]
        assert len(recorded) <= len(firsts[key])
        for turn_start, first in zip(recorded, firsts[key]):
            assert (turn_start == first).all()
            checked += 1
    assert checked >= 8


def test_a_turn_baseline_records_the_turn_start_and_the_search_plays_f_alone():
    run = TDRun(TURN)
    block = run.net.block
    sequences, results = run.play()
    inputs, targets, _ = run.returns(sequences, results)
    assert inputs.shape[1] == 2 * block and inputs.dtype == np.int64
    position, start = inputs[:, :block], inputs[:, block:]
    assert (start[0::2] == start[1::2]).all() and (start[:, -1] == 1).all()  # one turn's start, a root stop
    assert (position[0::2, -1] == 1).all() and (position[1::2, -1] == 0).all()  # the stop, then the turn end
    played = run.player().arrays
    assert all((a == b).all() for a, b in zip(played, learner.quantize(run.net.value).arrays))
    with torch.no_grad():  # f's shared terms drop out: a position that is its turn's start is valued by the baseline
        rows = torch.as_tensor(np.concatenate([start[:3], start[:3]], axis=1))
        baseline = run.net.baseline(torch.as_tensor(start[:3]).float() * run.net.value.scale).squeeze(-1)
        assert torch.allclose(run.net(rows), baseline)
    before = loss(run, inputs, targets)
    assert fitted_loss(run, inputs, targets, 5) < before


def correction_weights(run: TDRun) -> list[np.ndarray]:
    return [p.detach().numpy().copy() for name, p in run.net.named_parameters() if name.split(".")[0] in
            ("first", "second", "output")]


def test_drawn_moves_teach_the_correction_and_the_regression_leaves_it_alone():
    run = TDRun(RANKED)
    sequences, results = run.play()
    assert len(run.drawn) >= 10
    for decision in run.drawn:
        kept = len(decision.blocks)
        assert 2 <= kept <= RANKED.search_top and 0 <= decision.pick < kept
        assert decision.values.shape == (kept,) and decision.turn_start.shape == decision.blocks[0].shape
    assert len({d.pick for d in run.drawn}) > 1  # drawn, not the search's choice each time
    inputs, targets, _ = run.returns(sequences, results)
    with torch.no_grad():  # a correction that is not zero, so that the regression could move it
        run.net.output.weight.fill_(0.1)
    before = correction_weights(run)
    run.fit(inputs, targets)
    assert all((a == b).all() for a, b in zip(before, correction_weights(run)))
    logits = run.net.drawn_logits(run.drawn)
    with torch.no_grad():  # the model's own logit of each drawn stop
        rows = torch.as_tensor(np.stack([np.concatenate([d.blocks[d.pick], [d.values[d.pick], 0.0], d.turn_start])
                                         for d in run.drawn]))
        assert torch.allclose(logits, run.net(rows))
    run.fit_drawn(run.drawn_targets(sequences, results, run.chances(inputs)))
    assert any((a != b).any() for a, b in zip(before, correction_weights(run)))


def test_a_drawn_move_is_fitted_to_the_hand_result_at_lambda_one_and_to_the_next_position_at_zero():
    run = TDRun(RANKED)
    sequences, results = run.play()
    inputs, _, chances = run.returns(sequences, results)
    ends = np.array([results[d.hand, d.seat] for d in run.drawn])
    assert np.array_equal(run.drawn_targets(sequences, results, chances), ends)
    with torch.no_grad():  # a model whose chances differ from every result
        run.net.b.fill_(0.3)
    run.settings = TDSettings(**{**RANKED.__dict__, "drawn_lam": 0.0})
    chances, keys = run.chances(inputs), sorted(sequences)
    starts = dict(zip(keys, np.cumsum([0] + [len(sequences[key]) for key in keys])))
    followed = [d.position < len(sequences[d.hand, d.seat]) for d in run.drawn]
    assert any(followed) and not all(followed)  # some drawn moves end their hand before a stop
    expected = []
    for d, after in zip(run.drawn, followed):
        if not after:
            expected.append(results[d.hand, d.seat])
            continue
        at = starts[d.hand, d.seat] + d.position  # the first position after the move: its 0-return is the next one's
        last = d.position == len(sequences[d.hand, d.seat]) - 1
        expected.append(results[d.hand, d.seat] if last else chances[at + 1])
    assert np.allclose(run.drawn_targets(sequences, results, chances), expected)
    assert not np.allclose(expected, ends)


def test_a_drawn_decision_whose_stops_r_cannot_tell_apart_moves_nothing():
    run = TDRun(RANKED)
    run.play()
    same = [learner.DrawnDecision(d.hand, d.seat, np.repeat(d.blocks[:1], len(d.blocks), axis=0), d.values, d.pick,
                                  d.turn_start, d.position) for d in run.drawn]
    logits = run.net.drawn_logits(same)
    logits.sum().backward()
    assert all(p.grad is None or p.grad.abs().max() < 1e-6 for p in run.net.parameters())
