"""How far one decision moves the outcome, against the noise of the games that follow it.

    python experiments/decision_signal.py [--kind discards|plays] [--decisions 20] [--samples 400] [--seed 0]
                                         [--share 0.08] [--json OUT]
    python experiments/decision_signal.py --summarize OUT [OUT ...] [--kind plays --hands 200]

Not a speed benchmark: it measures the signal that every outcome-driven way of improving on ``pretrained-2p``
(Monte-Carlo rollouts, expert iteration, Monte-Carlo or TD value fits, an evolution strategy) has to find.
``pretrained-2p`` plays itself on the batched engine from the deals ``seed * 1000`` on. At a ``--share`` of its
decisions (drawn from ``--seed``'s generator) that have an alternative of ``--kind`` (``discards``: its turn-end
discard and every other distinct legal discard, one empty pile standing for all; ``plays``: its action and every
play that leads to another position), each of those actions is made on ``--samples`` copies of the game, the
cards its seat cannot see shuffled among their places, the same copies for every action (common random
numbers); ``pretrained-2p`` plays each copy to its end in both seats. Per decision it prints the win rate after
the bot's own action, the best and the worst; ``--json`` is written again after each, so a stopped run keeps
what it measured.

The summary (of this run, or of the ``--json`` files of several runs side by side) estimates one improvement
step over ``pretrained-2p`` by split samples (:func:`improvement_step`: at each decision the best action on one
half of the copies, scored against the bot's own on the other half; issue 38's direct measure of the headroom),
its ceiling (the measured best action's win rate minus the bot's own: on average at least what choosing the truly
best action would gain, since the mean of a maximum is at least the maximum of the means), and the spread of
the actions' true win chances: the variance of the measured win rates across a decision's actions is the
true variance plus ``(1 - rho)`` times the sampling variance ``p (1 - p) / samples``, where ``rho`` is the
correlation of two actions' results on one copy (read off how often they agree), and a bootstrap over the
decisions gives its 95% upper bound. It prints how far the bot's own action is above the others (against their
mean, the share of them it beats: half when its choice is no better than another's, and how many are more than
two standard errors of a difference above it: 2.3% of them by chance when all are equal), how many games per
action would tell apart two actions the bound apart (at two standard errors: a lower bound), and the CPU
seconds a game played out takes, with the command, the versions and the load. With ``--hands`` it also counts the
decisions of ``--kind`` a seat meets in a hand and sums the step and its ceiling over them: by the
performance-difference identity, a policy's gain in win rate is the sum of its advantages over the bot along the
hand (to first order: they are measured where the bot plays), so a small gain a decision can still add up to
a large one a hand, and a per-decision interval that looks narrow may bound nothing a hand.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import platform
import sys
import time

import numba
import numpy as np

from agents.batched import bots
from agents.batched.learned import SHIPPED, TABLE_CODES, learned_actions
from skipbo_env.actions import END_TURN, FIRST_DISCARD
from skipbo_env.cards import NUM_BUILDING_PILES, NUM_DISCARD_PILES
from skipbo_env.files import FileRefused, read_file_text, write_json_atomically
from skipbo_env.game import Game
from skipbo_env.rules import Rules
from skipbo_env.vector import VectorGame
from skipbo_env.vector.engine import MAX_SEED
from skipbo_env.vector.layout import RUNNING
from training.snes.trainer import play_table
from skipbo_cli.arguments import bounded_float, bounded_int
from skipbo_cli.script import ScriptParser, check_output_file, count, run

RULES = Rules(num_players=2, stock_size=30)
MAX_ACTIONS = FIRST_DISCARD + 1
"""Room for the actions of one decision: every play id, and the bot's own action."""
MAX_RECORDS_BYTES = 64 * 2**20
"""The largest ``--json`` file ``--summarize`` reads."""
CHANCE_ABOVE_TWO_SE = 0.023
"""The chance that an action no better than the bot's own measures more than two standard errors above it."""
WORST_CASE_VARIANCE = 0.25
"""``p (1 - p)`` at ``p = 1/2``: the games needed to resolve a spread are counted at the noisiest win rate."""
MAX_SAMPLES = 4_000
"""The most games per action: the copies of every action are one batch of the engine, ``1 + samples x
MAX_ACTIONS`` games of about 5 KB each, under 2 GB at this cap."""
BOOTSTRAP = 2000
"""Resamples of the decisions for the upper bound of the spread (from a generator seeded 0)."""
TABLE = np.ascontiguousarray(SHIPPED[0:1])
"""``pretrained-2p``'s parameters (the first shipped learned weights), as a one-row table."""


def determinize(state: dict, seat: int, rng: np.random.Generator) -> dict:
    """``state`` (``Game.to_dict()``) with every card ``seat`` cannot see (the draw pile, the other hands, every
    stockpile below its top) shuffled among those places, and a new generator for later shuffles."""
    seats = [dict(info, hand=list(info["hand"]), stock=list(info["stock"])) for info in state["seats"]]
    hidden = [list(state["draw_pile"])]
    hidden += [info["stock"][:-1] for info in seats]
    hidden += [info["hand"] if other != seat else [] for other, info in enumerate(seats)]
    cards = [int(card) for card in rng.permutation(np.array(sum(hidden, []), dtype=np.int64))]
    parts, start = [], 0
    for place in hidden:
        parts.append(cards[start:start + len(place)])
        start += len(place)
    players = len(seats)
    for other, info in enumerate(seats):
        info["stock"] = parts[1 + other] + info["stock"][-1:]
        if other != seat:
            info["hand"] = sorted(parts[1 + players + other])
    return dict(state, seats=seats, draw_pile=parts[0], rng=np.random.PCG64(int(rng.integers(2**63))).state)


def distinct_discards(legal: np.ndarray, lengths: np.ndarray) -> list[int]:
    """The legal discard ids, the first empty discard pile standing for every empty one."""
    empty = [pile for pile in range(NUM_DISCARD_PILES) if lengths[pile] == 0]
    out = []
    for action in legal:
        if FIRST_DISCARD <= action < END_TURN:
            pile = (action - FIRST_DISCARD) % NUM_DISCARD_PILES
            if lengths[pile] or pile == empty[0]:
                out.append(int(action))
    return out


class Rollouts:
    """Row 0 of a batch holds the game played; the other rows hold the copies played out."""

    def __init__(self, samples: int, max_actions: int = MAX_ACTIONS) -> None:
        self.samples = samples
        self.engine = VectorGame(RULES, 1 + samples * max_actions, auto_reset=False, observations=False, threads=1)
        self.controllers = np.full((self.engine.batch_size, RULES.num_players), TABLE_CODES, dtype=np.int64)
        self.streams = bots.new_streams(self.engine.batch_size)
        self.games_played = 0
        self.cpu = 0.0

    def bot_action(self) -> int:
        """``pretrained-2p``'s action in row 0."""
        out = np.zeros(1, dtype=np.int64)
        e = self.engine
        learned_actions(e.games, e.action_mask, e.cfg, np.zeros(1, dtype=np.int64), TABLE[0], out)
        return int(out[0])

    def outcomes(self, actions: list[int], rng: np.random.Generator) -> np.ndarray:
        """``wins[sample, k]`` of the seat to act in row 0 after ``actions[k]``, on the same copies for every ``k``."""
        e = self.engine
        seat = int(e.games["seat"][0])
        state = e.to_dict(0)
        rows = np.arange(1, 1 + self.samples * len(actions), dtype=np.int64)
        for sample in range(self.samples):
            game = Game.from_dict(determinize(state, seat, rng))
            for k in range(len(actions)):
                e.set_game(rows[sample * len(actions) + k], game)
        e.step_rows(rows, np.tile(np.array(actions, dtype=np.int64), self.samples))
        steps, positions = np.zeros(len(rows), dtype=np.int64), np.zeros(len(rows), dtype=np.int64)
        start = time.process_time()
        play_table(e.games, e.action_mask, e.cfg, self.controllers, self.streams, rows, steps, positions, TABLE)
        self.cpu += time.process_time() - start
        self.games_played += len(rows)
        return e.games["winners"][rows, seat].astype(float).reshape(self.samples, len(actions))


def alternatives(engine: VectorGame, own: int, kind: str) -> list[int]:
    """``own`` (the bot's action in row 0) and the distinct alternatives of ``kind`` to it: for ``discards``, when
    ``own`` is a discard, every other distinct discard; for ``plays``, at any decision with a legal play, every
    play that leads to another position (a card from one source onto building piles of one height leads to one)."""
    legal = np.flatnonzero(engine.action_mask[0])
    if kind == "discards":
        if not FIRST_DISCARD <= own < END_TURN:
            return [own]
        seat = int(engine.games["seat"][0])
        return [own] + [a for a in distinct_discards(legal, engine.games["discard_len"][0, seat]) if a != own]
    heights = engine.games["building_len"][0]
    seen = {(own // NUM_BUILDING_PILES, int(heights[own % NUM_BUILDING_PILES]))} if own < FIRST_DISCARD else set()
    out = [own]
    for action in legal[legal < FIRST_DISCARD]:
        key = (int(action) // NUM_BUILDING_PILES, int(heights[action % NUM_BUILDING_PILES]))
        if key not in seen:
            seen.add(key)
            out.append(int(action))
    return out


def self_play(rollouts: Rollouts, deals, kind: str):
    """``pretrained-2p`` plays itself in row 0 of ``rollouts`` on each of ``deals``: at each decision yields the
    deal and the bot's action with its alternatives of ``kind`` (:func:`alternatives`), then makes the action."""
    e = rollouts.engine
    row = np.zeros(1, dtype=np.int64)
    for deal in deals:
        e.deal(row, np.array([deal]))
        while e.games["outcome"][0] == RUNNING:
            action = rollouts.bot_action()
            yield deal, alternatives(e, action, kind)
            e.step_rows(row, np.array([action], dtype=np.int64))


def measure(decisions: int, samples: int, seed: int, share: float, kind: str = "discards",
            save=lambda records: None) -> list[dict]:
    """One record a measured decision (see the module docstring); ``save(records)`` after each."""
    rollouts = Rollouts(samples)
    rng = np.random.default_rng(seed)
    records: list[dict] = []
    for deal, actions in self_play(rollouts, itertools.count(seed * 1000), kind):
        if len(actions) > 1 and rng.random() < share:
            games, cpu = rollouts.games_played, rollouts.cpu
            wins = rollouts.outcomes(actions, rng)
            records.append(record(deal, rollouts.engine, actions, wins, rollouts.games_played - games,
                                  rollouts.cpu - cpu))
            print_record(records[-1])
            save(records)
            if len(records) == decisions:
                break
    return records


def decisions_a_hand(hands: int, seed: int, kind: str) -> np.ndarray:
    """``counts[hand, seat]``: the decisions with an alternative of ``kind`` (those :func:`measure` draws from)
    that each seat meets in ``hands`` hands of ``pretrained-2p`` self-play from the deals ``seed * 1000`` on."""
    rollouts = Rollouts(0)
    counts = np.zeros((hands, RULES.num_players), dtype=np.int64)
    for deal, actions in self_play(rollouts, range(seed * 1000, seed * 1000 + hands), kind):
        if len(actions) > 1:
            counts[deal - seed * 1000, int(rollouts.engine.games["seat"][0])] += 1
    return counts


def over_a_hand(estimate: dict, counts: np.ndarray) -> dict:
    """A per-decision ``estimate`` (:func:`mean_with_interval`) summed over the decisions a seat meets in a hand:
    by the performance-difference identity (to first order: the advantages are measured where the bot plays),
    the change in the seat's win rate from taking that step at every one of them. Its standard error combines
    both (delta method), the count's from the spread of the hands' per-seat means."""
    per_hand = counts.mean(axis=1)
    count = float(per_hand.mean())
    count_se = float(per_hand.std(ddof=1) / np.sqrt(len(per_hand))) if len(per_hand) > 1 else 0.0
    gain = count * estimate["gain"]
    se = float(np.sqrt((count * estimate["se"]) ** 2 + (estimate["gain"] * count_se) ** 2))
    return {"decisions": count, "decisions_se": count_se, "gain": gain, "se": se,
            "ci95": [gain - 1.96 * se, gain + 1.96 * se]}


def record(deal: int, engine: VectorGame, actions: list[int], wins: np.ndarray, games: int, cpu: float) -> dict:
    return {"deal": deal, "turn": int(engine.games["turn"][0]),
            "stockpiles": engine.games["stock_len"][0, :RULES.num_players].tolist(), "actions": actions,
            "samples": int(wins.shape[0]), "win_rates": wins.mean(axis=0).tolist(),
            "agreement": float((wins[:, 1:] == wins[:, :1]).mean()),
            "half_rates": [half.mean(axis=0).tolist() for half in np.array_split(wins, 2)],
            "games": games, "cpu_seconds": cpu}


def print_record(r: dict) -> None:
    rates = np.array(r["win_rates"])
    print(f"deal {r['deal']} turn {r['turn']} stockpiles {r['stockpiles']}: {len(rates)} actions, "
          f"own {rates[0]:.3f}, best {rates.max():.3f}, worst {rates.min():.3f} ({r['samples']} games each)",
          flush=True)


def improvement_step(records: list[dict]) -> dict | None:
    """The split-sample estimate of one improvement step over the bot, per decision: on each half of a decision's
    copies choose the action of the best win rate (the bot's own among ties), and score it against the bot's own
    action on the other half (the two directions averaged). Unbiased by the choice, since the half that scores an
    action did not choose it; the mean over the records that hold halves, its standard error and 95% interval
    (``None`` when none does)."""
    gains = []
    for r in records:
        if "half_rates" not in r:
            continue
        halves = [np.array(half) for half in r["half_rates"]]
        gains.append(np.mean([scoring[np.argmax(choosing)] - scoring[0]
                              for choosing, scoring in (halves, halves[::-1])]))
    return mean_with_interval(gains) if gains else None


def mean_with_interval(values: list[float]) -> dict:
    """The mean of ``values`` (one a decision), its standard error and 95% interval (``nan`` from one value)."""
    mean = float(np.mean(values))
    se = float(np.std(values, ddof=1) / np.sqrt(len(values))) if len(values) > 1 else float("nan")
    return {"decisions": len(values), "gain": mean, "se": se, "ci95": [mean - 1.96 * se, mean + 1.96 * se]}


def summarize(records: list[dict]) -> dict:
    """The estimates of the module docstring, over ``records``."""
    true_variances, sampling_sd, correlations, gaps, leads, ranks = [], [], [], [], [], []
    beaten = compared = 0
    for r in records:
        rates = np.array(r["win_rates"])
        leads.append(rates[0] - rates[1:].mean())
        ranks.append((np.sum(rates[1:] < rates[0]) + 0.5 * np.sum(rates[1:] == rates[0])) / (len(rates) - 1))
        p = float(rates.mean())
        sampling = p * (1 - p) / r["samples"]
        chance_agreement = p * p + (1 - p) * (1 - p)
        rho = 0.0 if chance_agreement >= 1 else 1 - (1 - r["agreement"]) / (1 - chance_agreement)
        true_variances.append(rates.var(ddof=1) - (1 - rho) * sampling)
        difference_se = np.sqrt(2 * (1 - rho) * sampling)
        beaten += int(np.sum(rates[1:] - rates[0] > 2 * difference_se))
        compared += len(rates) - 1
        sampling_sd.append(np.sqrt(sampling))
        correlations.append(rho)
        gaps.append(rates.max() - rates[0])
    variances = np.array(true_variances)
    resampled = variances[np.random.default_rng(0).integers(len(variances), size=(BOOTSTRAP, len(variances)))]
    spread = float(np.sqrt(max(variances.mean(), 0.0)))
    upper = float(np.sqrt(max(np.quantile(resampled.mean(axis=1), 0.95), 0.0)))
    games = sum(r["games"] for r in records)
    rho = float(np.mean(correlations))
    needed = float("inf") if upper == 0 else 2 * WORST_CASE_VARIANCE * (1 - rho) * (2 / upper) ** 2
    return {"decisions": len(records), "actions_per_decision": float(np.mean([len(r["win_rates"]) for r in records])),
            "sampling_sd": float(np.mean(sampling_sd)), "correlation": rho, "true_spread": spread, "true_spread_upper": upper,
            "own_minus_others": float(np.mean(leads)),
            "own_minus_others_se": mean_with_interval(leads)["se"],
            "own_percentile": float(np.mean(ranks)), "above_own": beaten, "compared": compared, "games_per_action_to_resolve_spread": needed,
            "cpu_seconds_per_game": (sum(r["cpu_seconds"] for r in records) / games) if games else None,
            "improvement_step": improvement_step(records), "ceiling": mean_with_interval(gaps)}


def print_summary(summary: dict, command: str) -> None:
    print(f"$ {command}")
    print(f"versions: python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}; "
          f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"{summary['decisions']} decisions, {summary['actions_per_decision']:.1f} distinct actions each; "
          f"sampling sd of a win rate {summary['sampling_sd']:.4f}; correlation of two actions' results "
          f"{summary['correlation']:.2f}")
    print(f"estimated sd of the actions' true win chances: {summary['true_spread']:.4f} (95% bootstrap upper "
          f"bound {summary['true_spread_upper']:.4f})")
    se = summary["own_minus_others_se"]
    print(f"the bot's own action: {summary['own_minus_others']:+.4f} "
          f"({f'se {se:.4f}' if math.isfinite(se) else 'no standard error from one decision'}) "
          f"against the mean of the others, above {summary['own_percentile']:.0%} of them on average; "
          f"{summary['above_own']} of {summary['compared']} others more than two standard errors above it "
          f"(about {CHANCE_ABOVE_TWO_SE * summary['compared']:.1f} if all were equal)")
    needed = summary["games_per_action_to_resolve_spread"]
    print("games per action to tell apart two actions an upper-bound sd apart (2 standard errors): "
          + (f"at least {needed:.0f}" if math.isfinite(needed) else "no number of games (the measured spread is 0)"))
    step = summary["improvement_step"]
    if step is not None:
        print(f"one improvement step (the best action on half of the copies, scored against the bot's own on the "
              f"other half): {step['gain']:+.4f} a decision ({interval(step)}; {step['decisions']} decisions)")
    ceiling = summary["ceiling"]
    print(f"the ceiling of one step (the measured best action minus the bot's own, on average at least what the "
          f"truly best action would gain): {ceiling['gain']:+.4f} a decision ({interval(ceiling)})")
    if summary["cpu_seconds_per_game"] is not None:
        print(f"{summary['cpu_seconds_per_game'] * 1000:.1f} ms of CPU a game played out")


def print_over_a_hand(summary: dict, counts: np.ndarray, kind: str) -> None:
    """The summary's step and ceiling summed over the decisions of ``kind`` a seat meets in a hand (``counts``)."""
    ceiling = over_a_hand(summary["ceiling"], counts)
    print(f"a seat meets {ceiling['decisions']:.1f} decisions with an alternative ({kind}) a hand (se "
          f"{ceiling['decisions_se']:.1f}; {len(counts)} hands of pretrained-2p self-play): a point of win rate a "
          f"hand is {0.01 / ceiling['decisions']:.5f} a decision. Summed over them (the performance-difference "
          f"identity, to first order; figures beyond +-1 say only that the measure cannot bound a hand's change), "
          f"the change in the seat's win rate over a hand:")
    if summary["improvement_step"] is not None:
        step = over_a_hand(summary["improvement_step"], counts)
        print(f"  one improvement step at every one: {step['gain']:+.4f} ({interval(step)})")
    print(f"  its ceiling: {ceiling['gain']:+.4f} ({interval(ceiling)})")


def interval(estimate: dict) -> str:
    """The 95% interval of a :func:`mean_with_interval`, in words."""
    low, high = estimate["ci95"]
    return (f"95% interval [{low:+.4f}, {high:+.4f}]" if math.isfinite(estimate["se"])
            else "no interval from one decision")


RECORD_FIELDS = ("win_rates", "samples", "agreement", "games", "cpu_seconds")


def read_records(path: str) -> list[dict]:
    """The records of a ``--json`` file; ``ValueError`` with one line naming the file and the field when it holds
    none, or a record whose values this script could not have written."""
    try:
        data = json.loads(read_file_text(path, max_bytes=MAX_RECORDS_BYTES, what="records file"))
    except FileRefused:
        raise
    except (ValueError, RecursionError) as error:
        raise ValueError(f"{path} is not valid JSON ({type(error).__name__})") from None
    records = data.get("records") if isinstance(data, dict) else None
    if not isinstance(records, list) or not records or not all(
            isinstance(r, dict) and all(field in r for field in RECORD_FIELDS) for r in records):
        raise ValueError(f"{path} holds no records of this script (a JSON object whose 'records' list has the "
                         f"fields {', '.join(RECORD_FIELDS)})")
    for index, r in enumerate(records):
        problem = record_problem(r)
        if problem:
            raise ValueError(f"{path}: record {index} {problem}")
    return records


def record_problem(r: dict) -> str | None:
    """What is wrong with one record's values (``None`` when nothing is)."""
    def number(value) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

    def count(value, low: int) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= low

    rates = r["win_rates"]
    if not isinstance(rates, list) or len(rates) < 2 or not all(number(p) and 0 <= p <= 1 for p in rates):
        return "'win_rates' must be a list of at least two win rates from 0 to 1 (the bot's own action first)"
    if not count(r["samples"], 2):
        return "'samples' must be an integer >= 2 (games per action)"
    if not number(r["agreement"]) or not 0 <= r["agreement"] <= 1:
        return "'agreement' must be a number from 0 to 1"
    if not count(r["games"], 0):
        return "'games' must be an integer >= 0"
    if not number(r["cpu_seconds"]) or r["cpu_seconds"] < 0:
        return "'cpu_seconds' must be a finite number >= 0"
    halves = r.get("half_rates", [rates, rates])
    if not isinstance(halves, list) or len(halves) != 2 or not all(
            isinstance(half, list) and len(half) == len(rates) and all(number(p) and 0 <= p <= 1 for p in half)
            for half in halves):
        return "'half_rates' must be two lists of win rates from 0 to 1, one a half of the copies, as 'win_rates'"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(prog="decision_signal.py", description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=count, default=20, help="decisions measured (default 20)")
    parser.add_argument("--samples", type=bounded_int(2, MAX_SAMPLES), default=400,
                        help="games per action (default 400)")
    parser.add_argument("--seed", type=bounded_int(0, MAX_SEED // 1000 - 1), default=0,
                        help="deals seed*1000 on, and the sampling (default 0)")
    parser.add_argument("--share", type=share, default=0.08, help="share of the eligible decisions measured (default 0.08)")
    parser.add_argument("--kind", choices=("discards", "plays"), default="discards",
                        help="the decisions measured: turn-end discards, or plays (default discards)")
    parser.add_argument("--json", help="write the records to this file (a new file)")
    parser.add_argument("--summarize", nargs="+", metavar="JSON", help="summarize the records of earlier runs")
    parser.add_argument("--hands", type=bounded_int(1, 1000), help="also count the decisions of --kind a seat "
                        "meets in a hand, over this many hands (1-1000) of pretrained-2p self-play from the deals "
                        "seed*1000 on, and sum the step and its ceiling over them (with --summarize, give the "
                        "records' --kind)")
    args = parser.parse_args(argv)
    command = " ".join(["python experiments/decision_signal.py", *(argv if argv is not None else sys.argv[1:])])
    if args.summarize:
        records = [record for path in args.summarize for record in read_records(path)]
    else:
        if args.json:
            check_output_file(args.json)

        def save(records: list[dict]) -> None:
            if args.json:
                write_json_atomically(args.json, {"command": command, "records": records})

        records = measure(args.decisions, args.samples, args.seed, args.share, args.kind, save)
    summary = summarize(records)
    print_summary(summary, command)
    if args.hands:
        print_over_a_hand(summary, decisions_a_hand(args.hands, args.seed, args.kind), args.kind)
    return 0


share = bounded_float(lambda value: 0 < value <= 1, "a share above 0 and at most 1")


if __name__ == "__main__":
    raise SystemExit(run(main))
