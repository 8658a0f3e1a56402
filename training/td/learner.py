"""TD(λ) from self-play results: the neural bot's value of the places a turn stops, learned from whole hands.

Read top to bottom: the settings, one iteration (play a batch of hands, work out the λ-returns, fit), the
run's state on disk.

**Self-play.** The batched engine (``skipbo_env.vector``) plays ``hands`` hands at a time, every seat the
neural bot with the current weights (quantized to the kernels' integers, :func:`training.neural.value_net.quantize`):
the planner's whole-turn search valued by the network (``agents.batched.neural``). With chance ``explore`` a
decision takes a uniformly drawn legal action instead.

**What is learned.** Each turn a seat ends with a discard passes through two positions the network values:
the *stop* (the position before the discard: the search's root then, ``pending_discard`` 1) and the *turn
end* (the afterstate after the discard, before the next seat moves). A seat's stops and turn ends in the
order it reached them, then the hand's result for that seat (1 win, 0 loss, 0.5 a draw or a cut-off hand),
give each position its λ-return: ``G_t = (1 - λ) p_{t+1} + λ G_{t+1}``, ``p`` the network's chance of winning
at the next position, ``G`` at the last the result (λ = 1: the result itself, a Monte-Carlo return). The
network's logit is fitted to them by the binary cross-entropy, in minibatches.

**The start.** From nothing: random weights, the observation encoding only (no teacher, no hand-made
features). (The residual start over the learned bot's value is not built yet.)

**The run's state** (:meth:`TDRun.save`, :meth:`TDRun.resume`): the float weights, the optimiser's moments,
both generators and the counters, as numbers only (``state.npz`` of arrays read without pickles, and
``state.json``); a resumed run continues with the weights of an uninterrupted one.
"""

from __future__ import annotations

import io
import json
import os
import time
from dataclasses import asdict, dataclass

import numpy as np
import torch

from agents.batched.neural import decide_rows, decision_arrays, root_inputs, turn_end_inputs
from skipbo_env.actions import END_TURN, FIRST_DISCARD
from skipbo_env.cards import WILD
from skipbo_env.files import read_file_bytes, read_file_text, write_bytes_atomically, write_json_atomically
from skipbo_env.rules import Rules
from skipbo_env.vector import VectorGame
from training.neural.value_net import ValueNet, quantize

STATE_FORMAT = "skipbo-td-state/1"
MAX_STATE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class TDSettings:
    """One run's settings (saved with its state)."""

    num_players: int = 2
    stock_size: int = 30
    hidden: tuple[int, int] = (128, 32)
    hands: int = 64
    """Hands played per iteration (one batch of the engine)."""
    lam: float = 1.0
    explore: float = 0.02
    learning_rate: float = 1e-3
    epochs: int = 1
    minibatch: int = 1024
    seed: int = 0


class TDRun:
    """A run of the learner: ``iterate()`` plays one batch of hands and fits the network to their returns."""

    def __init__(self, settings: TDSettings) -> None:
        self.settings = settings
        torch.manual_seed(settings.seed)
        self.net = ValueNet(settings.num_players, tuple(settings.hidden))
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=settings.learning_rate)
        self.rng = np.random.default_rng(settings.seed)
        self.rules = Rules(num_players=settings.num_players, stock_size=settings.stock_size)
        self.hands_played = 0
        self.iterations = 0
        self.positions_fitted = 0
        self.cpu_seconds = 0.0

    # ------------------------------------------------------------------ one iteration
    def iterate(self) -> dict:
        """Play ``settings.hands`` hands, fit the network to their λ-returns; the iteration's figures."""
        start = time.process_time()
        sequences, results = self.play()
        inputs, targets = self.returns(sequences, results)
        loss = self.fit(inputs, targets)
        self.hands_played += self.settings.hands
        self.iterations += 1
        self.positions_fitted += len(targets)
        spent = time.process_time() - start
        self.cpu_seconds += spent
        return {"iteration": self.iterations, "hands": self.hands_played, "positions": len(targets), "loss": loss,
                "cpu_seconds": spent, "hands_per_cpu_second": self.settings.hands / max(spent, 1e-9)}

    def play(self) -> tuple[dict, np.ndarray]:
        """Self-play one batch: ``{(hand, seat): [inputs of the stops and turn ends, in order]}`` and the results
        (``float[hand, seat]``: 1 a win, 0 a loss, 0.5 a draw or a cut-off hand). The deals are the batched
        engine's seeds from ``hands_played`` on."""
        settings = self.settings
        arrays = quantize(self.net).arrays
        engine = VectorGame(self.rules, settings.hands, seed=self.hands_played, auto_reset=False, threads=1)
        sequences: dict[tuple[int, int], list[np.ndarray]] = {}
        actions = np.empty(settings.hands, dtype=np.int64)
        expected = np.zeros(WILD + 1, dtype=np.int64)
        while not engine.over.all():
            rows = np.flatnonzero(~engine.over)
            observations, masks = engine.obs[rows], engine.action_mask[rows]
            chosen = actions[:len(rows)]
            decide_rows(observations, masks, arrays, chosen)
            for i in np.flatnonzero(self.rng.random(len(rows)) < settings.explore):
                chosen[i] = self.rng.choice(np.flatnonzero(masks[i]))
            seats = engine.current_seat[rows]
            for i in np.flatnonzero((chosen >= FIRST_DISCARD) & (chosen < END_TURN)):
                stop = np.zeros(arrays[0].shape[0], dtype=np.int64)
                root_inputs(observations[i], arrays[6], stop, expected)
                needs, hand, piles, heights, info, root = decision_arrays(observations[i], arrays)
                turn_end = np.empty_like(stop)
                turn_end_inputs(chosen[i], needs, hand, piles, heights, info, arrays, root, turn_end)
                sequences.setdefault((int(rows[i]), int(seats[i])), []).extend([stop, turn_end])
            engine.step_rows(rows, chosen.copy())
        finished = engine.finished()
        results = np.full((settings.hands, settings.num_players), 0.5)
        won = finished.outcome == 1
        results[finished.rows[won]] = finished.winners[won].astype(float)
        engine.close()
        return sequences, results

    def returns(self, sequences: dict, results: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every recorded position's inputs and its λ-return (see the module's docstring)."""
        lam = self.settings.lam
        keys = sorted(sequences)
        inputs = np.array([q for key in keys for q in sequences[key]], dtype=np.int64).reshape(
            -1, len(self.net.inputs))
        with torch.no_grad():
            chances = torch.sigmoid(self.net(torch.as_tensor(inputs))).numpy().astype(np.float64)
        targets = np.empty(len(inputs))
        at = 0
        for hand, seat in keys:
            length = len(sequences[hand, seat])
            following = results[hand, seat]
            for t in reversed(range(length)):
                targets[at + t] = following
                following = (1.0 - lam) * chances[at + t] + lam * following
            at += length
        return inputs, targets

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
                loss = torch.nn.functional.binary_cross_entropy_with_logits(self.net(x[batch]), y[batch])
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                total += loss.item() * len(batch)
            mean_loss = total / max(len(y), 1)
        return mean_loss

    # ------------------------------------------------------------------ the run's state
    def save(self, folder: str) -> None:
        """Write the run's state into ``folder``: ``state.npz`` (the weights, the optimiser's moments, torch's
        generator) and ``state.json`` (the settings, the counters, numpy's generator)."""
        arrays = {f"net.{name}": value.detach().numpy() for name, value in self.net.state_dict().items()}
        optimizer = self.optimizer.state_dict()
        for index, moments in optimizer["state"].items():
            for name, value in moments.items():
                arrays[f"optimizer.{index}.{name}"] = torch.as_tensor(value).numpy()
        arrays["torch_generator"] = torch.get_rng_state().numpy()
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        write_bytes_atomically(os.path.join(folder, "state.npz"), buffer.getvalue())
        write_json_atomically(os.path.join(folder, "state.json"), {
            "format": STATE_FORMAT, "settings": asdict(self.settings), "hands_played": self.hands_played,
            "iterations": self.iterations, "positions_fitted": self.positions_fitted,
            "cpu_seconds": self.cpu_seconds, "numpy_generator": self.rng.bit_generator.state})

    @classmethod
    def resume(cls, folder: str) -> TDRun:
        """The run whose state :meth:`save` wrote into ``folder``; ``ValueError`` naming what is wrong."""
        text = read_file_text(os.path.join(folder, "state.json"), max_bytes=MAX_STATE_BYTES, what="TD state")
        try:
            state = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"{folder}/state.json is not valid JSON: {error}") from None
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            raise ValueError(f"{folder}/state.json is not a TD run's state (\"format\": \"{STATE_FORMAT}\")")
        settings = dict(state["settings"])
        settings["hidden"] = tuple(settings["hidden"])
        run = cls(TDSettings(**settings))
        data = read_file_bytes(os.path.join(folder, "state.npz"), max_bytes=MAX_STATE_BYTES, what="TD state")
        with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
            run.net.load_state_dict({name[4:]: torch.from_numpy(arrays[name].copy()) for name in arrays.files
                                     if name.startswith("net.")})
            optimizer = run.optimizer.state_dict()
            moments: dict = {}
            for name in arrays.files:
                if name.startswith("optimizer."):
                    _, index, field = name.split(".", 2)
                    moments.setdefault(int(index), {})[field] = torch.from_numpy(arrays[name].copy())
            optimizer["state"] = moments
            run.optimizer.load_state_dict(optimizer)
            torch.set_rng_state(torch.from_numpy(arrays["torch_generator"].copy()))
        run.rng.bit_generator.state = state["numpy_generator"]
        run.hands_played = int(state["hands_played"])
        run.iterations = int(state["iterations"])
        run.positions_fitted = int(state["positions_fitted"])
        run.cpu_seconds = float(state["cpu_seconds"])
        return run
