"""The neural bot: what its network reads is what the observation would say, its arithmetic is exact, it
plays the same games on both engines, and its model files are numbers only."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

from agents import load_policy
from agents.batched import neural as kernels
from agents.batched.search import play_into
from agents.neural import COUNTER_MAX, MAX_SUM, MAX_WEIGHT, NeuralBot, largest_sum, network_from_dict, read_model
from evaluation.tournament import run_tournament
from skipbo_env import Game, Rules
from skipbo_env.encoding import GLOBAL_OFFSETS, LAYOUT_ROWS, observe
from skipbo_env.rules import MAX_COUNTER
from training.neural.value_net import ValueNet, quantize

FIELD_OF = {offset + k: name for name, offset, size in LAYOUT_ROWS for k in range(size)}
FIELD_OF[kernels.PENDING] = "pending_discard"


@pytest.fixture(scope="module")
def float_net():
    torch.manual_seed(4)
    net = ValueNet(2, (16, 8))
    with torch.no_grad():
        for parameter in net.parameters():
            parameter.mul_(3.0)  # larger than the initial weights, so decisions depend on the inputs
    return net


@pytest.fixture(scope="module")
def model_file(float_net, tmp_path_factory):
    path = tmp_path_factory.mktemp("neural") / "model.json"
    path.write_text(json.dumps(quantize(float_net).to_dict()))
    return str(path)


def positions(count_games: int, rules: Rules, turns: int = 60):
    """``(game, seat, observation)`` at every decision of a few hands played by the teacher."""
    teacher = load_policy("pretrained-2p")
    for seed in range(count_games):
        game = Game.new(rules, seed=seed)
        while not game.is_over and game.turn < turns:
            observation = observe(game, game.current_seat)
            yield game, game.current_seat, observation
            game.step(teacher.act(observation))


def inputs_of(vector, network):
    q = np.zeros(len(network.inputs), dtype=np.int64)
    kernels.root_inputs(np.asarray(vector, dtype=np.float32), network.arrays[6], q, np.zeros(14, dtype=np.int64))
    return q


def a_hand_play(action: int) -> bool:
    return action // 4 < 13


def differences(network, mine, theirs):
    fields = [FIELD_OF[int(network.inputs[k])] for k in np.flatnonzero(mine != theirs)]
    return fields


def test_a_stop_is_encoded_as_the_observation_after_its_plays(model_file):
    """Every play that neither plays the stockpile (the next card is unknown) nor empties the hand (the new
    cards are unknown): the search's stop after it reads what the observation says once it is played,
    except a discard-pile card from under the top eight coming into view (its place is not observed)."""
    network = read_model(model_file)
    arrays = network.arrays
    checked = surfaced = 0
    for game, seat, observation in positions(12, Rules(num_players=2, stock_size=20)):
        x = observation["observation"]
        last_card = sum(game.hand_counts[seat]) == 1
        for action in [a for a in game.legal_actions() if a < 92 and a // 4 != 13]:
            if last_card and a_hand_play(action):
                continue
            after = game.copy()
            after.step(action)
            if after.is_over:
                continue
            needs, hand, piles, heights, info, root = kernels.decision_arrays(x, arrays)
            n, h, t, d = (np.zeros((3, 4), np.int64), np.zeros((3, 14), np.int64), np.zeros((3, 2, 4), np.int64),
                          np.zeros((3, 2), np.int64))
            n[0], h[0], t[0] = needs, hand, heights
            play_into(n, h, t, d, 0, action, info)
            at, by = np.zeros(kernels.MAX_CHANGES, np.int64), np.zeros(kernels.MAX_CHANGES, np.int64)
            count = kernels.stop_changes(n[1], h[1], t[1], d[1], needs, heights, piles, info, x, root[3],
                                         arrays[6], root[1], at, by)
            stop = root[1].copy()
            np.add.at(stop, at[:count], by[:count])
            fields = differences(network, stop, inputs_of(observe(after, seat)["observation"], network))
            checked += 1
            if fields:
                assert set(fields) <= {"seat0.discard_cards", "buried_discards_0"}, fields
                surfaced += 1
    assert checked > 1000 and surfaced < checked / 100


def test_a_turn_end_is_encoded_as_the_observation_after_the_discard(model_file):
    """After each legal discard: the seat's own values (hand, its seat block, its buried cards) as the
    observation gives them once the discard is made."""
    network = read_model(model_file)
    arrays = network.arrays
    own = np.array([FIELD_OF[int(i)].startswith(("hand", "seat0.", "buried_discards_0"))
                    and FIELD_OF[int(i)] != "seat0.to_act" for i in network.inputs[:-1]] + [False])
    checked = 0
    for game, seat, observation in positions(8, Rules(num_players=2, stock_size=20)):
        x = observation["observation"]
        for action in [a for a in game.legal_actions() if 92 <= a < 144]:
            after = game.copy()
            after.step(action)
            needs, hand, piles, heights, info, root = kernels.decision_arrays(x, arrays)
            end = np.zeros(len(network.inputs), np.int64)
            kernels.turn_end_inputs(action, needs, hand, piles, heights, info, arrays, root, end)
            real = inputs_of(observe(after, seat)["observation"], network)
            assert not differences(network, np.where(own, end, 0), np.where(own, real, 0))
            assert end[-1] == 0 and root[1][-1] == 1  # pending_discard: 0 after the discard, 1 before
            checked += 1
    assert checked > 500


def test_the_integer_network_values_positions_as_the_float_network_does(float_net, model_file):
    network = read_model(model_file)
    first, first_bias, second, second_bias, output, output_bias, input_of = network.arrays
    kernel_values, float_inputs = [], []
    for _, _, observation in positions(3, Rules(num_players=2, stock_size=10)):
        q = inputs_of(observation["observation"], network)
        sums = np.empty(first.shape[1], np.int64)
        kernels.root_sums(q, first, first_bias, sums)
        kernel_values.append(kernels.network_value(sums, second, second_bias, output, output_bias[0],
                                                   np.empty(second.shape[0], np.int64)))
        float_inputs.append(q)
    with torch.no_grad():
        expected = float_net(torch.as_tensor(np.array(float_inputs))).numpy()
    assert np.abs(np.array(kernel_values) - expected).max() < 0.02
    assert np.std(kernel_values) > 0.1  # the values depend on the position


def test_the_neural_bot_plays_the_same_games_on_both_engines(model_file):
    bot = NeuralBot(model=model_file)
    rules = Rules(num_players=2, stock_size=10)
    results = [run_tournament([bot, "planner"], rules, games=12, seed=5, engine=engine) for engine in
               ("python", "vector")]
    python, vector = ([(g.seed, g.seating, g.winners, g.points, g.turns) for g in r.games] for r in results)
    assert python == vector
    assert all(r.complete for r in results)


def test_the_neural_bot_is_legal_and_deterministic_at_four_seats(model_file, tmp_path, float_net):
    torch.manual_seed(1)
    four = ValueNet(4, (8, 4))
    path = tmp_path / "four.json"
    path.write_text(json.dumps(quantize(four).to_dict()))
    bot = NeuralBot(model=str(path))
    rules = Rules(num_players=4, stock_size=5)
    first = run_tournament([bot, "greedy", "greedy", "greedy"], rules, games=8, seed=2, engine="vector")
    again = run_tournament([bot, "greedy", "greedy", "greedy"], rules, games=8, seed=2, engine="vector")
    assert first.complete and [g.winners for g in first.games] == [g.winners for g in again.games]
    with pytest.raises(ValueError, match="reads the field 'seat2.present', which the observation of a 2-seat table"):
        two_seat = json.loads(path.read_text())
        two_seat["num_players"] = 2
        from agents.neural import network_from_dict
        network_from_dict(two_seat)


@pytest.mark.parametrize("damage, message", [
    (lambda d: d.update(format="other"), "format"),
    (lambda d: d.update(hidden=[16]), "hidden must be"),
    (lambda d: d.update(first=d["first"][:-1]), "first must be a list of integers of shape"),
    (lambda d: d["second"][0].__setitem__(0, 1.5), "second must hold integers"),
    (lambda d: d["output"].__setitem__(0, 2**50), "output must hold integers of magnitude"),
    (lambda d: d.update(output_bias="x"), "output_bias must be an integer"),
    (lambda d: d.update(num_players=7), "num_players must be"),
    (lambda d: d["inputs"].__setitem__(0, 5), "inputs must be a list of"),
    (lambda d: d["inputs"].append(d["inputs"][0]), "inputs must name each field once"),
])
def test_a_damaged_model_file_is_one_line_naming_the_field(model_file, tmp_path, damage, message):
    data = json.loads(open(model_file).read())
    damage(data)
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=message):
        read_model(str(path))


def test_a_model_file_must_be_a_regular_file_of_plain_json(tmp_path):
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="nested too deeply|not valid JSON"):
        read_model(str(nested))
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        read_model(str(fifo))
    with pytest.raises(ValueError, match="must be a path"):
        NeuralBot(model=0)


def test_neural_loads_by_name_with_a_model_option(model_file):
    bot = load_policy(f"neural:model={model_file}")
    assert isinstance(bot, NeuralBot) and bot.model_file == model_file


def test_the_shipped_network_loads_by_name_and_plays_as_its_evaluation_says():
    bot = load_policy("neural-2p")
    assert isinstance(bot, NeuralBot) and bot.network.num_players == 2
    with pytest.raises(Exception, match="takes no options"):
        load_policy("neural-2p:model=x.json")
    result = run_tournament([bot, "greedy"], Rules(num_players=2), games=40, seed=11, engine="vector")
    assert result.agent_stats()[result.names[0]]["wins"] >= 36  # 99.8% of 4,000 games in its evaluation


def extreme_network(first_weight: int, second_weight: int, output_weight: int) -> dict:
    """A two-seat model whose only weights read ``max_turns``: every sum is largest when ``max_turns`` is."""
    count = len(kernels.input_indices(2))
    row = int(np.flatnonzero(kernels.input_indices(2) == GLOBAL_OFFSETS["max_turns"])[0])
    first = np.zeros((count, 4), dtype=object)
    first[row] = first_weight
    return {"format": "skipbo-neural/1", "num_players": 2, "inputs": kernels.input_indices(2).tolist(),
            "hidden": [4, 2], "first": first.tolist(), "first_bias": [0] * 4, "second": [[second_weight] * 4] * 2,
            "second_bias": [0] * 2, "output": [output_weight] * 2, "output_bias": 0}


def test_weights_at_the_allowed_maximum_are_refused_naming_the_file(tmp_path):
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(extreme_network(MAX_WEIGHT, MAX_WEIGHT, MAX_WEIGHT)))
    with pytest.raises(ValueError, match=f"{path}.*too large to be summed exactly in 64-bit integers") as error:
        read_model(str(path))
    assert "\n" not in str(error.value)


def test_weights_just_within_the_bound_play_exactly_at_the_largest_counter():
    """The largest model :func:`largest_sum` lets through: the kernels' int64 sums equal Python's exact ones."""
    first_weight = MAX_SUM // (2 * COUNTER_MAX)
    second_weight = MAX_SUM // (4 * (first_weight * COUNTER_MAX >> kernels.FIRST_SHIFT))
    output_weight = MAX_SUM // (2 * (4 * second_weight * (first_weight * COUNTER_MAX >> kernels.FIRST_SHIFT)
                                     >> kernels.SECOND_SHIFT))
    data = extreme_network(first_weight, second_weight, output_weight)
    network = network_from_dict(data)
    assert MAX_SUM / 4 < largest_sum(network) <= MAX_SUM
    with pytest.raises(ValueError, match="too large"):
        network_from_dict(extreme_network(2 * first_weight, second_weight, output_weight))
    game = Game(Rules(num_players=2, max_turns=MAX_COUNTER), seed=3)
    x = observe(game, game.current_seat)["observation"]
    first, first_bias, second, second_bias, output, output_bias, input_of = network.arrays
    q = np.zeros(first.shape[0], dtype=np.int64)
    kernels.root_inputs(x, input_of, q, np.zeros(14, dtype=np.int64))
    sums = np.empty(first.shape[1], dtype=np.int64)
    kernels.root_sums(q, first, first_bias, sums)
    logit = kernels.network_value(sums, second, second_bias, output, output_bias[0], np.empty(2, dtype=np.int64))
    exact_first = [sum(int(q[i]) * int(first[i, h]) for i in range(len(q))) for h in range(4)]
    exact_second = [max(0, sum(second_weight * (a >> kernels.FIRST_SHIFT) for a in exact_first if a > 0))
                    >> kernels.SECOND_SHIFT for _ in range(2)]
    exact_output = sum(output_weight * h for h in exact_second)
    assert sums.tolist() == exact_first and exact_output >= 2**60
    assert logit == exact_output * kernels.OUTPUT_UNIT


def test_an_integer_of_thousands_of_digits_is_one_line_naming_the_file(model_file, tmp_path):
    path = tmp_path / "digits.json"
    path.write_text(open(model_file).read().replace('"output_bias": ', '"output_bias": ' + "9" * 5000 + ", \"x\": "))
    with pytest.raises(ValueError, match=f"{path}.*an integer of 5,000 digits") as error:
        read_model(str(path))
    assert "\n" not in str(error.value) and "limit" not in str(error.value)


@pytest.mark.parametrize("engine", ["python", "vector"])
def test_a_model_for_two_players_is_refused_at_three_seats_before_any_game(engine):
    bot = load_policy("neural-2p")
    with pytest.raises(ValueError, match="was trained for 2 players and reads only the seats of a 2-player table; "
                                         "it does not play at a table of 3") as error:
        run_tournament([bot, "greedy", "greedy"], Rules(num_players=3), games=3, seed=1, engine=engine)
    assert "\n" not in str(error.value)


def test_a_model_for_two_players_refuses_three_seat_observations_on_either_engine():
    from skipbo_env.vector import VectorGame

    bot = load_policy("neural-2p")
    game = Game(Rules(num_players=3), seed=2)
    with pytest.raises(ValueError, match="does not play at a table of 3"):
        bot.act(observe(game, game.current_seat))
    engine = VectorGame(Rules(num_players=3), 4, seed=2)
    rows = np.arange(4)
    with pytest.raises(ValueError, match="does not play at a table of 3"):
        bot.act_batch(engine.observe(rows), engine.action_mask[rows])
