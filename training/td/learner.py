"""TD(λ) from self-play results: the neural bot's value of the places a turn stops, learned from whole hands.

Read top to bottom: the settings, one iteration (play a batch of hands, work out the λ-returns, fit), the
run's state on disk.

**Self-play.** The batched engine (``skipbo_env.vector``) plays ``hands`` hands at a time, the neural bot with
the current weights (quantized to the kernels' integers, :func:`training.neural.value_net.quantize`): the
planner's whole-turn search valued by the network (``agents.batched.neural``). With chance ``explore`` a decision
takes a uniformly drawn legal action instead. ``opponents`` shares the hands out: ``self`` hands have the network
in every seat (each seat learned from); a kernel bot's hands have the network in one seat (in turn), the bot in
the others, and only the network's seat is learned from.

**The league.** ``snapshots`` hands have the network in one seat (in turn, the only seat learned from) and a frozen
past copy of it in the others: one snapshot a hand, drawn uniformly from the pool with the run's numpy generator,
playing the same search with its own quantized weights. Every ``snapshot_every`` hands played a copy of the float
weights joins the pool, which keeps the newest ``max_snapshots``. While the pool is empty (the run's first
``snapshot_every`` hands) the snapshot hands are played as ``self`` hands. Playing against its past selves (and
the fixed bots) keeps the network from forgetting how to beat what it once beat, as self-play against only its
current self lets it cycle. Exploring is the learner's alone: ``explore`` draws the decisions of the seats learned
from, never a snapshot's or a bot's (the opponents play as they would, the returns judge the learner's moves).

**What is learned.** Each turn a seat ends with a discard passes through two positions the network values:
the *stop* (the position before the discard: the search's root then, ``pending_discard`` 1) and the *turn
end* (the afterstate after the discard, before the next seat moves). A seat's stops and turn ends in the
order it reached them, then the hand's result for that seat (1 win, 0 loss, 0.5 a draw or a cut-off hand),
give each position its λ-return: ``G_t = (1 - λ) p_{t+1} + λ G_{t+1}``, ``p`` the network's chance of winning
at the next position, ``G`` at the last the result (λ = 1: the result itself, a Monte-Carlo return). The
network's logit is fitted to them by the binary cross-entropy, in minibatches.

**The start** (``start``). ``scratch``: the neural bot's network from random weights, the observation encoding
only (no teacher, no hand-made features). ``teacher``: the residual model of :mod:`training.td.residual`, the
teacher's (``pretrained-2p``) value of a stop ``a * v + b`` plus a correction ``c * r`` of the stop's inputs and
the teacher's 16 features whose last layer starts at zero (so the first hands are the teacher's own), taken as
its change from the turn's start, a turn end adding ``a_d`` times the teacher's score of its discard, and a
baseline of the turn's start that the search never reads (the player's ``turn_starts``, recorded at each turn's
first decision of a seat learned from); it plays with :mod:`agents.batched.residual`'s kernels, records each position's inputs, features,
``v`` and ``s`` (:class:`training.td.residual.ResidualPlayer`), and fits ``r`` with Adam's step ``learning_rate``
and ``a``, ``b``, ``a_d`` and the baseline with ``CALIBRATION_RATE`` times it (none of them changes the play).

**The run's state** (:meth:`TDRun.state_arrays`, :meth:`TDRun.state_fields`, restored by
:meth:`TDRun.restore`): the float weights, the optimiser's moments, the pool's float weights and torch's generator
as arrays (an ``.npz`` read without pickles), numpy's generator, the counters and the hands at which each snapshot
was taken as JSON numbers; a restored run continues with the
weights of an uninterrupted one. Reading and checking these files is :mod:`training.td.state`.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import torch

from agents.batched import bots
from agents.batched.neural import decide_rows, decision_arrays, input_fields, root_inputs, turn_end_inputs
from agents.neural import NeuralBot
from agents.residual import ResidualBot
from skipbo_env.actions import END_TURN, FIRST_DISCARD
from skipbo_env.cards import WILD
from skipbo_env.rules import Rules
from skipbo_env.vector import VectorGame
from skipbo_env.vector.engine import SEARCH_ROWS_PER_THREAD
from training.neural.value_net import CALIBRATION_RATE, ValueNet, quantize
from training.schema import SELF, SNAPSHOTS
from training.td.residual import ResidualNet, ResidualPlayer, kernel_model, residual_document
from training.td.turn_change import TurnChangeNet

SCRATCH, TEACHER = "scratch", "teacher"
"""The starts: random weights (the neural bot's network), or the residual over the teacher's value."""

COUNTERS = ("hands_played", "iterations", "positions_fitted")
"""The run's counters (integers) saved with its state, beside ``cpu_seconds``."""


@dataclass(frozen=True)
class TDSettings:
    """One run's settings (saved with its state)."""

    num_players: int = 2
    stock_size: int = 30
    decks: int = 1
    max_turns: int = 1000
    """Turns after which a hand is cut off (counted as a draw), as in the environments."""
    stock_sizes: tuple[int, ...] = ()
    """The stockpile sizes of the iterations' hands, in turn (iteration ``i`` plays ``stock_sizes[i % len]``);
    empty: ``stock_size`` always. Shorter stockpiles end in a win more often: their results teach sooner."""
    hidden: tuple[int, int] = (128, 32)
    hands: int = 64
    """Hands played per iteration (one batch of the engine)."""
    lam: float = 1.0
    explore: float = 0.02
    learning_rate: float = 1e-3
    learning_rate_after: dict = field(default_factory=dict)
    """A step schedule: hands played -> Adam's step from then on (``learning_rate`` before the first)."""
    epochs: int = 1
    minibatch: int = 1024
    opponents: dict = field(default_factory=lambda: {SELF: 1.0})
    """Share of the hands by who sits in the other seats: ``self``, ``snapshots`` or a kernel bot's name."""
    snapshot_every: int = 8192
    """Hands between two snapshots joining the pool (taken only when ``opponents`` has a ``snapshots`` share)."""
    max_snapshots: int = 8
    """Snapshots the pool keeps: the newest."""
    seed: int = 0
    threads: int = 1
    """Threads of the self-play: the parts of an iteration's hands (``chunk``) played at once, or without parts the
    engine's kernel threads, the searches of the batch's games split among them (the same hands and weights at
    any count)."""
    chunk: int = 0
    """Hands of a part of an iteration (0: the whole iteration in one part, drawing from the run's generator; each
    of several parts draws from its own, seeded from the run's: :meth:`TDRun.play`)."""
    turn_baseline: bool = False
    """The scratch start: value a position from its turn's start (:class:`training.td.turn_change.TurnChangeNet`).
    The teacher start always does."""
    search_top: int = 0
    """The teacher start: the teacher's best stops of a decision the correction ranks (0: every stop)."""
    rank_share: float = 0.0
    """The teacher start with ``search_top``: the share of the learner's decisions whose move is drawn uniformly
    among the kept stops; ``r`` then learns from those draws alone (:meth:`TDRun.fit_drawn`)."""
    drawn_lam: float = 1.0
    """With ``rank_share``: λ of a drawn decision's target, the λ-return of the first position its seat reaches
    after it (1: the hand's result)."""
    correction_bound: float = 0.0
    """The teacher start: the most a position's correction may be worth, in the teacher's units (0: no bound;
    :mod:`training.td.residual`)."""
    start: str = SCRATCH
    """``scratch``: the neural bot's network from random weights; ``teacher``: the residual over the teacher's
    value (:mod:`training.td.residual`)."""

    def learning_rate_at(self, hands: int) -> float:
        """Adam's step once ``hands`` hands are played: the last of ``learning_rate_after`` reached, else
        ``learning_rate``."""
        reached = [start for start in self.learning_rate_after if hands >= start]
        return self.learning_rate_after[max(reached)] if reached else self.learning_rate

    def tables(self) -> list[str]:
        """Who sits in the other seats of each hand of an iteration: ``hands`` entries, each kind its share
        (largest remainders), in the order of ``opponents``."""
        kinds = list(self.opponents)
        exact = np.array([self.opponents[kind] for kind in kinds]) * self.hands
        counts = np.floor(exact).astype(int)
        for index in np.argsort(counts - exact, kind="stable")[:self.hands - counts.sum()]:
            counts[index] += 1
        return [kind for kind, count in zip(kinds, counts) for _ in range(count)]


class NetworkPlayer:
    """The scratch start's player: the neural bot with a network's kernel arrays ``arrays``; ``turn_baseline``:
    whether what it records carries the turn's start (:class:`training.td.turn_change.TurnChangeNet`)."""

    def __init__(self, arrays: tuple, turn_baseline: bool = False) -> None:
        self.arrays = arrays
        self.turn_baseline = turn_baseline

    def decide(self, engine: VectorGame, rows, observations, masks, out) -> None:
        """``out`` := the bot's actions in the games ``rows`` (their observations and masks), split among the
        engine's kernel threads."""
        engine.run_parts(lambda a, b: decide_rows(observations[a:b], masks[a:b], self.arrays, out[a:b]), len(rows))

    def turn_starts(self, engine: VectorGame, rows, observations) -> np.ndarray:
        """The inputs of the decisions in the games ``rows`` as stops, each the first of its seat's turn (with a
        turn baseline; without one an empty row per game: the network values a position alone)."""
        if not self.turn_baseline:
            return np.zeros((len(rows), 0), dtype=np.int64)
        out = np.zeros((len(rows), self.arrays[0].shape[0]), dtype=np.int64)
        expected = np.zeros(WILD + 1, dtype=np.int64)
        for i in range(len(rows)):
            root_inputs(observations[i], self.arrays[6], out[i], expected)
        return out

    def positions(self, engine: VectorGame, rows, observations, actions,
                  turn_starts) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each game of ``rows`` whose seat discards ``actions[i]``: the inputs of the stop it discards from
        and of the turn end, each followed by ``turn_starts[i]`` (:meth:`turn_starts`' row of the turn)."""
        arrays = self.arrays
        expected = np.zeros(WILD + 1, dtype=np.int64)
        pairs = []
        for i in range(len(rows)):
            stop = np.zeros(arrays[0].shape[0], dtype=np.int64)
            root_inputs(observations[i], arrays[6], stop, expected)
            needs, hand, piles, heights, info, root = decision_arrays(observations[i], arrays)
            turn_end = np.empty_like(stop)
            turn_end_inputs(actions[i], needs, hand, piles, heights, info, arrays, root, turn_end)
            pairs.append((np.concatenate([stop, turn_starts[i]]), np.concatenate([turn_end, turn_starts[i]])))
        return pairs


@dataclass(frozen=True)
class Snapshot:
    """A frozen past copy of the network in the pool."""

    hands: int
    """Hands played when it was taken."""
    weights: dict[str, torch.Tensor]
    """Its float weights (the network's ``state_dict``), saved with the run's state."""
    player: object
    """It as the kernels play it (:class:`NetworkPlayer` or :class:`training.td.residual.ResidualPlayer`)."""


class TDRun:
    """A run of the learner: ``iterate()`` plays one batch of hands and fits the network to their returns."""

    def __init__(self, settings: TDSettings) -> None:
        self.settings = settings
        torch.manual_seed(settings.seed)
        if settings.start == TEACHER:
            self.net = ResidualNet(settings.num_players, tuple(settings.hidden), settings.search_top,
                                   settings.correction_bound)
            calibration = self.net.calibration()
            layers = [p for p in self.net.parameters() if all(p is not q for q in calibration)]
            self.optimizer = torch.optim.Adam([{"params": calibration, "lr": CALIBRATION_RATE * settings.learning_rate},
                                               {"params": layers}], lr=settings.learning_rate)
            self.row_width, self.row_type = self.net.row_width, np.float64
        else:
            network = TurnChangeNet if settings.turn_baseline else ValueNet
            self.net = network(settings.num_players, tuple(settings.hidden))
            self.optimizer = torch.optim.Adam(self.net.parameters(), lr=settings.learning_rate)
            self.row_width = self.net.row_width if settings.turn_baseline else len(self.net.inputs)
            self.row_type = np.int64
        self.rate_scales = [group["lr"] / settings.learning_rate for group in self.optimizer.param_groups]
        self.rng = np.random.default_rng(settings.seed)
        self.rules = self.rules_of(settings.stock_size)
        self.hands_played = 0
        self.iterations = 0
        self.positions_fitted = 0
        self.cpu_seconds = 0.0
        self.pool: list[Snapshot] = []
        self.drawn: list[DrawnDecision] = []
        """The decisions of the last batch of hands whose move was drawn (``rank_share``)."""
        self.work_pool = None
        """Where the parts of an iteration's hands are played (``chunk``): a :class:`training.distributed.WorkPool`
        on Ray, or here on ``threads`` threads (None, or a pool in this process)."""
        self.remote_cpu_seconds = 0.0
        """The CPU seconds the last batch's Ray tasks took (what this process's own clock does not count)."""

    def player(self, net=None):
        """``net``'s weights (by default the current ones) as the kernels play them (:class:`NetworkPlayer` or
        :class:`training.td.residual.ResidualPlayer`)."""
        net = self.net if net is None else net
        if self.settings.start == TEACHER:
            return ResidualPlayer(net)
        return NetworkPlayer(quantize(search_network(net)).arrays, self.settings.turn_baseline)

    def bot(self):
        """A player of the current weights for the tournaments (the curve, the final evaluation)."""
        if self.settings.start == TEACHER:
            return ResidualBot.of(*kernel_model(self.net), label="the run's model", search_top=self.net.search_top)
        return NeuralBot.of(quantize(search_network(self.net)), label="the run's network")

    def model_dict(self) -> dict:
        """The current weights as a model file's numbers (the neural bot's format, or the residual model's)."""
        if self.settings.start == TEACHER:
            return residual_document(self.net)
        return quantize(search_network(self.net)).to_dict()

    def rules_of(self, stock_size: int) -> Rules:
        settings = self.settings
        return Rules(num_players=settings.num_players, stock_size=stock_size, decks=settings.decks,
                     max_turns=settings.max_turns)

    def iteration_rules(self) -> Rules:
        """The rules of the next iteration's hands: its stockpile size of ``stock_sizes``, in turn."""
        sizes = self.settings.stock_sizes
        return self.rules_of(sizes[self.iterations % len(sizes)]) if sizes else self.rules

    # ------------------------------------------------------------------ one iteration
    def iterate(self) -> dict:
        """Play ``settings.hands`` hands, fit the network to their λ-returns; the iteration's figures."""
        start = time.process_time()
        sequences, results = self.play()
        inputs, targets, chances = self.returns(sequences, results)
        drawn_targets = self.drawn_targets(sequences, results, chances)
        self.set_learning_rate(self.settings.learning_rate_at(self.hands_played))
        loss = self.fit(inputs, targets)
        if self.drawn:
            self.fit_drawn(drawn_targets)
        before = self.hands_played
        self.hands_played += self.settings.hands
        self.iterations += 1
        self.positions_fitted += len(targets)
        if self.settings.opponents.get(SNAPSHOTS) and crossed(before, self.hands_played, self.settings.snapshot_every):
            self.add_snapshot(self.hands_played, {name: value.detach().clone()
                                                  for name, value in self.net.state_dict().items()})
        spent = time.process_time() - start + self.remote_cpu_seconds
        self.cpu_seconds += spent
        return {"iteration": self.iterations, "hands": self.hands_played, "positions": len(targets), "loss": loss,
                "cpu_seconds": spent, "hands_per_cpu_second": self.settings.hands / max(spent, 1e-9)}

    def set_learning_rate(self, rate: float) -> None:
        """Adam's step ``rate`` for the network's layers, the teacher start's calibration keeping its ratio."""
        for group, scale in zip(self.optimizer.param_groups, self.rate_scales):
            group["lr"] = scale * rate

    def add_snapshot(self, hands: int, weights: dict[str, torch.Tensor]) -> None:
        """Add a snapshot of ``weights`` taken at ``hands`` to the pool; drop the oldest beyond ``max_snapshots``."""
        frozen = copy.deepcopy(self.net)  # not a new network: its initialisation would draw on torch's generator
        frozen.load_state_dict(weights)
        self.pool.append(Snapshot(hands, weights, self.player(frozen)))
        del self.pool[:-self.settings.max_snapshots]

    def play(self) -> tuple[dict, np.ndarray]:
        """One batch of hands: ``{(hand, seat): [rows of the stops and turn ends, in order]}`` (their inputs; at
        the teacher start also their features, ``v`` and ``s``: :class:`training.td.residual.ResidualNet`) of the
        seats the network plays and learns from, and the results (``float[hand, seat]``: 1 a win, 0 a loss, 0.5 a
        draw or a cut-off hand); the drawn decisions go to ``self.drawn``. The deals are the batched engine's seeds
        from ``hands_played`` on.

        With ``chunk`` the batch is played in parts of that many hands, each with a generator seeded from the
        run's (:func:`play_work_item`): on ``threads`` threads here, or as Ray tasks where ``work_pool`` is on Ray
        (their CPU seconds then go to ``remote_cpu_seconds``), with the same hands, moves and draws wherever they
        are played. Without (one part) the part draws from the run's generator itself."""
        settings = self.settings
        player, pool_players, rules = self.player(), [snapshot.player for snapshot in self.pool], self.iteration_rules()
        seating = self.seating()
        bounds = part_bounds(settings.hands, settings.chunk)
        self.remote_cpu_seconds = 0.0
        if len(bounds) == 1:
            parts = [play_part(settings, rules, player, pool_players, self.hands_played, seating, self.rng,
                               settings.threads)]
        else:
            seeds = self.rng.integers(0, 2**63 - 1, size=len(bounds))
            shared = (settings, rules, player, pool_players)
            items = [(self.hands_played + a, tuple(array[a:b] for array in seating), int(seed))
                     for (a, b), seed in zip(bounds, seeds)]
            if self.work_pool is not None and self.work_pool.on_ray:
                parts = self.work_pool.map(play_work_item, items, shared=shared)
                self.remote_cpu_seconds = sum(part.cpu_seconds for part in parts)
            else:
                with ThreadPoolExecutor(min(settings.threads, len(bounds))) as threads:
                    parts = [future.result() for future in
                             [threads.submit(play_work_item, shared, item) for item in items]]
        sequences, self.drawn = {}, []
        for (first, _), part in zip(bounds, parts):
            sequences.update({(hand + first, seat): rows for (hand, seat), rows in part.sequences.items()})
            self.drawn.extend(dataclasses.replace(decision, hand=decision.hand + first) for decision in part.drawn)
        return sequences, np.concatenate([part.results for part in parts])

    def drawn_targets(self, sequences: dict, results: np.ndarray, chances: np.ndarray) -> np.ndarray:
        """The target of each drawn decision (``self.drawn``): the ``drawn_lam``-return of the first position its
        seat recorded after it (``chances``: the network's of the recorded positions, :meth:`returns`' order), the
        hand's result where the hand ended first. Below 1 it weighs the network's values of the positions that follow (the turn's stop, the next
        turns'), which a drawn choice moves as it moves the result, with far less of the rest of the hand's luck."""
        lam = self.settings.drawn_lam
        ends = [results[d.hand, d.seat] for d in self.drawn]
        if lam == 1.0 or not self.drawn:
            return np.array(ends)
        keys = sorted(sequences)
        returns = lambda_returns(sequences, keys, chances, results, lam)
        offsets = dict(zip(keys, np.cumsum([0] + [len(sequences[key]) for key in keys])))
        return np.array([returns[offsets[d.hand, d.seat] + d.position]
                         if d.position < len(sequences.get((d.hand, d.seat), ())) else end
                         for d, end in zip(self.drawn, ends)])

    def fit_drawn(self, targets: np.ndarray) -> None:
        """Fit ``r`` to the drawn decisions (``self.drawn``) and their ``targets`` (:meth:`drawn_targets`), one
        gradient step a ``minibatch`` of them: each one's logit is the model's for the stop drawn (``a v + b +
        c (r(stop) - r(turn start)) + baseline``), but only its ``c (r(stop) - mean r(kept stops))`` carries a
        gradient. The stop was drawn uniformly, whatever else happened in the hand, so what moves ``r`` is how the
        target differs with the stop drawn: the choice's effect, not what goes with winning in the hands played
        (docs/research-log.md)."""
        order = self.rng.permutation(len(self.drawn))
        for begin in range(0, len(order), self.settings.minibatch):
            picked = order[begin:begin + self.settings.minibatch]
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                self.net.drawn_logits([self.drawn[k] for k in picked]),
                torch.as_tensor(targets[picked], dtype=torch.float32))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def seating(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Who sits where in the next batch of hands (``settings.tables()``): the engine's controller of each seat
        (a kernel bot's code, or ``bots.OTHER`` for the network and the snapshots), the one seat learned from in
        each hand (-1: every seat) and the pool's snapshot in its other seats (-1: none; one drawn a hand)."""
        settings = self.settings
        players = settings.num_players
        controllers = np.full((settings.hands, players), bots.OTHER, dtype=np.int64)
        learner_seat = np.full(settings.hands, -1, dtype=np.int64)
        opponent = np.full(settings.hands, -1, dtype=np.int64)
        tables = [SELF if kind == SNAPSHOTS and not self.pool else kind for kind in settings.tables()]
        against_snapshots = [hand for hand, kind in enumerate(tables) if kind == SNAPSHOTS]
        if against_snapshots:
            opponent[against_snapshots] = self.rng.integers(len(self.pool), size=len(against_snapshots))
        for hand, kind in enumerate(tables):
            if kind != SELF:
                learner_seat[hand] = (hand + self.iterations) % players
            if kind not in (SELF, SNAPSHOTS):
                controllers[hand] = bots.kernel_bot_code(kind)
                controllers[hand, learner_seat[hand]] = bots.OTHER
        return controllers, learner_seat, opponent

    def returns(self, sequences: dict, results: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every recorded position's inputs, its λ-return (see the module's docstring) and the network's chance of
        winning there, seat by seat in the order of ``sorted(sequences)``."""
        keys = sorted(sequences)
        inputs = np.array([q for key in keys for q in sequences[key]], dtype=self.row_type).reshape(
            -1, self.row_width)
        chances = self.chances(inputs)
        return inputs, lambda_returns(sequences, keys, chances, results, self.settings.lam), chances

    def chances(self, inputs: np.ndarray) -> np.ndarray:
        """The network's chance of winning at each recorded position."""
        with torch.no_grad():
            return torch.sigmoid(self.net(torch.as_tensor(inputs))).numpy().astype(np.float64)

    def logits(self, rows: torch.Tensor) -> torch.Tensor:
        """The network's logits of recorded rows, as the regression fits them: with ``rank_share``, ``r`` held
        fixed (it learns from the drawn decisions alone)."""
        if self.settings.rank_share:
            return self.net(rows, fit_correction=False)
        return self.net(rows)

    def fit(self, inputs: np.ndarray, targets: np.ndarray) -> float:
        """``settings.epochs`` passes of minibatch steps of the binary cross-entropy; the last pass's mean loss."""
        settings = self.settings
        x, y = torch.as_tensor(inputs), torch.as_tensor(targets, dtype=torch.float32)
        mean_loss = float("nan")
        for _ in range(settings.epochs):
            order = torch.as_tensor(self.rng.permutation(len(y)))
            total = 0.0
            for begin in range(0, len(y), settings.minibatch):
                batch = order[begin:begin + settings.minibatch]
                loss = torch.nn.functional.binary_cross_entropy_with_logits(self.logits(x[batch]), y[batch])
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                total += loss.item() * len(batch)
            mean_loss = total / max(len(y), 1)
        return mean_loss

    # ------------------------------------------------------------------ the run's state
    def state_arrays(self) -> bytes:
        """The arrays of the run's state as an ``.npz``: ``net.NAME`` (the float weights), ``optimizer.I.NAME``
        (Adam's moments and step of parameter ``I``), ``snapshot.K.NAME`` (the float weights of the pool's ``K``-th
        snapshot, oldest first) and ``torch_generator``."""
        arrays = {f"net.{name}": value.detach().numpy() for name, value in self.net.state_dict().items()}
        for index, snapshot in enumerate(self.pool):
            arrays.update({f"snapshot.{index}.{name}": value.numpy() for name, value in snapshot.weights.items()})
        for index, moments in self.optimizer.state_dict()["state"].items():
            for name, value in moments.items():
                arrays[f"optimizer.{index}.{name}"] = torch.as_tensor(value).numpy()
        arrays["torch_generator"] = torch.get_rng_state().numpy()
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    def state_fields(self) -> dict:
        """The numbers of the run's state: the counters, the CPU seconds, numpy's generator, the hands at which
        each snapshot of the pool was taken (oldest first) and the fields whose values the first layers' rows
        read, in order (``inputs``: the arrays of :meth:`state_arrays` fit only that list)."""
        return {**{name: getattr(self, name) for name in COUNTERS}, "cpu_seconds": self.cpu_seconds,
                "numpy_generator": self.rng.bit_generator.state,
                "snapshot_hands": [snapshot.hands for snapshot in self.pool],
                "inputs": list(input_fields(self.settings.num_players))}

    def restore(self, arrays: dict[str, np.ndarray], fields: dict) -> None:
        """Continue from a state of :meth:`state_arrays` (read back as arrays by name, already checked to be the
        network's shapes, finite) and :meth:`state_fields`."""
        self.pool = []
        for index, hands in enumerate(fields["snapshot_hands"]):
            self.add_snapshot(int(hands), {name: torch.from_numpy(arrays[f"snapshot.{index}.{name}"].copy())
                                           for name in self.net.state_dict()})
        self.net.load_state_dict({name[4:]: torch.from_numpy(value.copy()) for name, value in arrays.items()
                                  if name.startswith("net.")})
        optimizer = self.optimizer.state_dict()
        moments: dict = {}
        for name, value in arrays.items():
            if name.startswith("optimizer."):
                _, index, part = name.split(".", 2)
                moments.setdefault(int(index), {})[part] = torch.from_numpy(value.copy())
        optimizer["state"] = moments
        self.optimizer.load_state_dict(optimizer)
        torch.set_rng_state(torch.from_numpy(arrays["torch_generator"].copy()))
        self.rng.bit_generator.state = fields["numpy_generator"]
        for name in COUNTERS:
            setattr(self, name, int(fields[name]))
        self.cpu_seconds = float(fields["cpu_seconds"])


@dataclass
class DrawnDecision:
    """A decision of the learner whose move was drawn among the stops the teacher's search kept (``rank_share``)."""

    hand: int
    seat: int
    blocks: np.ndarray
    """The kept stops' blocks (inputs, then features), in the order the search found them."""
    values: np.ndarray
    """The teacher's ``v`` of each."""
    pick: int
    """The stop drawn."""
    turn_start: np.ndarray
    """The block of the turn's start."""
    position: int
    """How many positions its seat had recorded before it: the index of the first one after it."""


class TurnStarts:
    """Each game's current turn start, as the player records it (its ``turn_starts``) at the first decision of a
    turn of a seat learned from."""

    def __init__(self, hands: int) -> None:
        self.turn = np.full(hands, -1, dtype=np.int64)
        """The turn (the game record's ``turn``) whose start each game's block is."""
        self.blocks: np.ndarray | None = None

    def record(self, player, engine: VectorGame, rows: np.ndarray, observations: np.ndarray) -> None:
        """Record the blocks of the decisions of ``rows`` (seats learned from) that are their turn's first."""
        turns = engine.games["turn"][rows]
        first = np.flatnonzero(turns != self.turn[rows])
        if len(first):
            blocks = player.turn_starts(engine, rows[first], observations[first])
            if self.blocks is None:
                self.blocks = np.zeros((len(self.turn), blocks.shape[1]), dtype=blocks.dtype)
            self.blocks[rows[first]] = blocks
            self.turn[rows[first]] = turns[first]


def part_bounds(hands: int, chunk: int) -> list[tuple[int, int]]:
    """The parts ``[a, b)`` of an iteration's ``hands`` played as one each: ``chunk`` hands (the last the rest), or
    all of them in one where ``chunk`` is 0."""
    size = chunk or hands
    return [(a, min(a + size, hands)) for a in range(0, hands, size)]


def play_work_item(shared: tuple, item: tuple) -> "PlayedPart":
    """One part of an iteration's hands (the work function of :mod:`training.distributed`): ``shared`` is
    ``(settings, rules, the network's player, the pool's players)``, ``item`` ``(the part's first deal, its
    seating arrays, its generator's seed)``; played on one kernel thread, its CPU seconds counted."""
    settings, rules, player, pool_players = shared
    first_hand, seating, seed = item
    # Ray hands a task its arrays read-only, which numba compiles kernels for anew: copies are writeable
    player, pool_players, seating = copy.deepcopy((player, pool_players, seating))
    start = time.thread_time()
    part = play_part(settings, rules, player, pool_players, first_hand, seating, np.random.default_rng(seed), 1)
    part.cpu_seconds = time.thread_time() - start
    return part


@dataclass
class PlayedPart:
    """What :func:`play_part` returns of its hands (numbered from 0 within the part)."""

    sequences: dict
    """``{(hand, seat): [rows of the stops and turn ends, in order]}`` of the seats learned from."""
    results: np.ndarray
    """``float[hand, seat]``: 1 a win, 0 a loss, 0.5 a draw or a cut-off hand."""
    drawn: list
    """The decisions whose move was drawn (:class:`DrawnDecision`)."""
    cpu_seconds: float = 0.0
    """The CPU seconds playing them took (:func:`play_work_item`)."""


def play_part(settings: TDSettings, rules: Rules, player, pool_players: list, first_hand: int, seating: tuple,
              rng: np.random.Generator, threads: int) -> PlayedPart:
    """Play the hands of ``seating`` (:meth:`TDRun.seating`'s arrays for them), dealt from ``first_hand`` on, on
    an engine of ``threads`` kernel threads: ``player`` (the network) in the seats learned from and the ``self``
    hands, ``pool_players[k]`` for snapshot ``k``, kernel bots where ``seating`` names them; every draw
    (exploring, ``rank_share``) from ``rng``."""
    controllers, learner_seat, opponent = seating
    hands = len(controllers)
    engine = VectorGame(rules, hands, seed=first_hand, auto_reset=False, threads=threads)
    streams = bots.new_streams(hands)
    all_rows = np.arange(hands)
    bots.seed_rows(streams, all_rows, bots.streams_for(first_hand + all_rows))
    sequences: dict[tuple[int, int], list[np.ndarray]] = {}
    drawn_decisions: list[DrawnDecision] = []
    turn_starts = TurnStarts(hands)
    actions = np.empty(hands, dtype=np.int64)
    steps = np.empty(hands, dtype=np.int64)
    while not engine.over.all():
        rows = np.flatnonzero(~engine.over)
        engine.run_rows(bots.play_bots, rows, (engine.games, engine.action_mask, engine.cfg, controllers, streams),
                        (steps[:len(rows)],), min_rows=SEARCH_ROWS_PER_THREAD)
        rows = np.flatnonzero(~engine.over)
        if not len(rows):
            break
        observations, masks = engine.observe(rows), engine.action_mask[rows]
        seats = engine.games["seat"][rows]
        learning = (learner_seat[rows] < 0) | (seats == learner_seat[rows])
        turn_starts.record(player, engine, rows[learning], observations[learning])
        chosen = actions[:len(rows)]
        if learning.all():
            player.decide(engine, rows, observations, masks, chosen)
        else:  # the rows grouped by who moves: the network (-1) or a snapshot of the pool
            movers = np.where(learning, -1, opponent[rows])
            for mover in np.unique(movers):
                group = np.flatnonzero(movers == mover)
                decided = np.empty(len(group), dtype=np.int64)
                mover_player = player if mover < 0 else pool_players[mover]
                mover_player.decide(engine, rows[group], observations[group], masks[group], decided)
                chosen[group] = decided
        drawn = draw_moves(settings, rng, player, engine, rows, observations, learning, turn_starts, sequences,
                           chosen, drawn_decisions)
        for i in np.flatnonzero((rng.random(len(rows)) < settings.explore) & learning & ~drawn):
            chosen[i] = rng.choice(np.flatnonzero(masks[i]))
        discarding = np.flatnonzero(learning & (chosen >= FIRST_DISCARD) & (chosen < END_TURN))
        if len(discarding):  # none before a seat learned from has decided (a snapshot may move first everywhere)
            recorded = player.positions(engine, rows[discarding], observations[discarding], chosen[discarding],
                                        turn_starts.blocks[rows[discarding]])
            for i, pair in zip(discarding, recorded):
                sequences.setdefault((int(rows[i]), int(seats[i])), []).extend(pair)
        engine.step_rows(rows, chosen.copy())
    finished = engine.finished()
    results = np.full((hands, settings.num_players), 0.5)
    won = finished.outcome == 1
    results[finished.rows[won]] = finished.winners[won].astype(float)
    engine.close()
    return PlayedPart(sequences, results, drawn_decisions)


def draw_moves(settings: TDSettings, rng: np.random.Generator, player, engine, rows, observations, learning,
               turn_starts, sequences, chosen, drawn_decisions: list) -> np.ndarray:
    """With ``rank_share``: at that share of the learner's decisions (``learning``) that choose among at least
    two kept stops, the move toward one of them drawn uniformly replaces ``chosen``'s, and the decision joins
    ``drawn_decisions`` (:class:`DrawnDecision`, with the count of positions ``sequences`` holds of its seat so
    far); whether each row's move was drawn."""
    drawn = np.zeros(len(rows), dtype=bool)
    if not settings.rank_share:
        return drawn
    asked = np.flatnonzero(learning & (rng.random(len(rows)) < settings.rank_share))
    blocks, values, firsts, counts = player.candidates(engine, rows[asked], observations[asked])
    choosing = np.flatnonzero(counts >= 2)
    if not len(choosing):
        return drawn
    picks = rng.integers(counts[choosing])
    at = asked[choosing]
    moves = firsts[choosing, picks]
    stops = np.flatnonzero(moves < 0)  # a stop at the turn's start: its discard is still to choose
    if len(stops):
        discards = np.empty(len(stops), dtype=np.int64)
        player.decide_drawn(engine, rows[at[stops]], observations[at[stops]], picks[stops], discards)
        moves[stops] = discards
    chosen[at] = moves
    drawn[at] = True
    seats = engine.games["seat"][rows[at]]
    for k, (i, pick) in enumerate(zip(choosing, picks)):
        hand, seat = int(rows[at[k]]), int(seats[k])
        drawn_decisions.append(DrawnDecision(hand, seat, blocks[i, :counts[i]], values[i, :counts[i]], int(pick),
                                             turn_starts.blocks[hand].copy(), len(sequences.get((hand, seat), ()))))
    return drawn


def lambda_returns(sequences: dict, keys: list, chances: np.ndarray, results: np.ndarray, lam: float) -> np.ndarray:
    """The λ-return of each recorded position, the seats' positions in the order of ``keys`` and ``chances`` the
    network's values of them: ``G_t = (1 - λ) p_{t+1} + λ G_{t+1}``, the seat's result after its last."""
    targets = np.empty(len(chances))
    at = 0
    for hand, seat in keys:
        length = len(sequences[hand, seat])
        following = results[hand, seat]
        for t in reversed(range(length)):
            targets[at + t] = following
            following = (1.0 - lam) * chances[at + t] + lam * following
        at += length
    return targets


def search_network(net):
    """The network the scratch start's search ranks stops by: ``net`` itself, or a turn-change model's ``f``."""
    return net.value if isinstance(net, TurnChangeNet) else net


def crossed(before: int, after: int, every: int) -> bool:
    """Whether a multiple of ``every`` lies in ``(before, after]``."""
    return after // every > before // every
