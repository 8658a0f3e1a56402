"""``backend: neural``: the neural bot's network fitted to a learned bot's lists, then to the lists of its own
games (DAgger).

The neural bot (:mod:`agents.neural`) searches its turn and values each place it could stop, and each
turn end a discard reaches, by a network that reads the observation encoding of that position. Only the
order of the values within one decision matters to it, so the network is fitted list by list
(:mod:`agents.batched.neural_teacher`, :func:`training.neural.value_net.fit_lists`): at a decision the teacher
(``neural.teacher``, a learned bot) lists where the turn could stop with its value of each, and the
network's softmax over the list is fitted to the teacher's; at a discard, to the teacher's choice.

1. **Generation 0**: the teacher plays ``neural.teacher_games`` hands against itself and lists its own
   decisions; ``neural.teacher_epochs`` passes over them.
2. **Generations 1, 2, ...**: the bot with the current network plays ``neural.games`` hands at the tables of
   ``neural.tables`` (``self``: the current network in the other seat too; ``past``: an earlier
   generation's; or any kernel bot), in every seat in turn; the teacher lists the network's decisions and
   the network is fitted again (from where it was) to the lists of the last ``neural.window`` generations.

With ``neural.outcome_weight`` > 0 each fit also takes the hands' results: every recorded decision's position,
fitted to the result of its hand for the seat that decided (a Monte-Carlo return of the seat's own play, beside
the teacher's lists; :func:`training.neural.value_net.fit_lists`).

3. **Evolution** (``neural.es_generations`` > 0): the lists can teach the network no more than the teacher knows,
   so the run ends by optimising what the network plays for, its wins. A separable natural evolution strategy
   (sNES, as ``backend: snes``) searches the output layer (the weights of the last hidden layer's features; the
   layers below stay as fitted): each generation ``neural.es_population`` candidates (mirrored pairs around the
   mean) play the same ``neural.es_games`` duplicate deals against each of ``neural.es_opponents``, and the mean
   and spreads move toward the better ranked (:func:`training.snes.trainer.snes_step`). Both bots of a game are
   deterministic, so two candidates that decide alike play the same game: only the decisions they differ in
   tell them apart.

The budget is work: ``neural.generations``; ``budget.max_minutes`` is only a guard. Every random choice comes
from one seeded ``numpy`` Generator (the deals, the order the lists are fitted in, the first weights), the
games are deterministic given their seeds and networks, and each generation starts a fresh optimiser, so a
run resumed from any checkpoint ends with the same weights as one that was never stopped. With
``ray.address`` the hands of a generation are played as Ray tasks, chunk by chunk, with the same result as a
local run. ``skipbo train neural_2p`` (``configs/neural_2p.yaml``) trains the two-player network;
``make train`` (``configs/quickstart.yaml``) a short run of the same.
"""

from __future__ import annotations

import io
import math
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TextIO

import numpy as np

from agents.batched.bots import kernel_bot_code
from agents.batched.neural import input_indices
from agents.neural import Network, NeuralBot, network_from_dict
from evaluation.results import wilson_interval
from evaluation.schedule import scheduled_games
from skipbo_env.files import write_bytes_atomically, write_json_atomically
from skipbo_env.provenance import versions
from skipbo_env.rules import Rules
from training.checkpoint import RunFolder, compact_json
from training.state_checks import CheckpointError, read_json_object
from training.config import TrainConfig
from training.neural.config import table_seats
from training.neural.data_files import DATA_DIR, data_file_name, npz_bytes, read_data_file
from training.neural.state import FRESH_ES, WEIGHTS_FILE, checked_state, read_float_weights
from training.schema import PAST, SELF, ConfigError
from training.distributed import WorkPool
from agents.loading import short_name
from training.common import RunLog, TrainResult, clock, print_summary, progress_bar, write_evaluation
from training.snes.trainer import mirrored_noise, snes_step
from training.neural.value_games import ListData, Seat, play_list_games
from agents.neural import model_path, read_model
from training.learning_curve import draw_learning_curve
from agents.batched import neural_teacher
from agents.batched.seating import start_compiling_bots
from agents.batched.neural import warm_up as network_warm_up
from skipbo_env.vector import VectorGame
from evaluation.tournament import agent_names, run_tournament

MODEL_FILE = "model.json"
"""The run's network (``agents.load_policy("neural:model=RUN/model.json")`` plays it)."""
CURVE_SEED, FINAL_SEED = 7_100_000, 7_200_000
"""Tournament seeds of the held-out deals of the curve and of the final evaluation (plus the run's seed)."""


@dataclass
class Generation:
    """What one generation played: its data and its log entry."""

    data: ListData
    entry: dict


class NeuralTrainer:
    """One ``backend: neural`` run in its run folder: generations, checkpoints, curve, evaluation, summary."""

    def __init__(self, config: TrainConfig, folder: RunFolder, progress: bool, out: TextIO) -> None:
        self.config, self.folder, self.progress, self.log = config, folder, progress, RunLog(out)
        self.settings = config.neural
        self.rules = config.make_rules()
        self.players = self.rules.num_players
        self.hidden = tuple(self.settings.hidden)
        self.data_dir = folder.path / DATA_DIR

    # ------------------------------------------------------------------ state
    def fresh_state(self) -> dict:
        return {"generation": -1, "games": 0, "decisions": 0, "wall_seconds": 0.0, "history": [], "log": [],
                "data_files": [], "archive": [], "evaluation": None, "teacher": None, "es": dict(FRESH_ES),
                "rng": np.random.default_rng(self.config.seed).bit_generator.state}

    def load_state(self):
        """``(state, float network or None)`` of the last checkpoint (``--resume``), every value checked; a fresh
        state for a new run."""
        checkpoint = self.folder.latest_checkpoint()
        if checkpoint is None:
            return self.fresh_state(), None
        path = checkpoint / "state.json"
        state = read_json_object(path)
        state.setdefault("es", dict(FRESH_ES))  # a run of a release before neural.es_generations
        checked_state(state, path, self.settings, self.players)
        net = read_float_weights(checkpoint / WEIGHTS_FILE, self.players, self.hidden)
        width = len(input_indices(self.players))
        for name in state["data_files"]:  # each read and checked now, so a damaged one stops the run before any work
            if not (self.data_dir / name).exists():
                raise CheckpointError(f"cannot resume from {path}: the data file it names, {self.data_dir / name}, "
                                      "is missing")
            self._read_data(name, width)
        return state, net

    # ------------------------------------------------------------------ the run
    def run(self) -> TrainResult:
        import torch

        torch.set_num_threads(self.config.threads)
        state, net = self.load_state()
        settings = self.settings
        if state["generation"] >= settings.generations and state["es"]["generation"] >= settings.es_generations:
            key, done = (("es_generations", state["es"]["generation"]) if settings.es_generations
                         else ("generations", state["generation"]))
            raise ConfigError(f"{self.folder.path} already trained {done} of neural.{key}={getattr(settings, key)}: "
                              f"give more, e.g. skipbo train --resume {self.folder.path} "
                              f"neural.{key}={2 * max(done, 1)}")
        rng = np.random.default_rng()
        rng.bit_generator.state = state["rng"]
        minutes = self.config.budget.max_minutes
        guard = math.inf if minutes is None else 60 * minutes - state["wall_seconds"]
        self.log.print(f"neural self-play: a {self.hidden[0]}x{self.hidden[1]} value network, "
                       f"{settings.teacher}'s lists for generation 0, "
                       f"{settings.games:,} hands a generation at {', '.join('+'.join(t) for t in settings.tables)}; "
                       f"budget {settings.generations} generations"
                       f"{f', then {settings.es_generations} of sNES on the output layer' if settings.es_generations else ''}"
                       f"{'' if minutes is None else f' (guard: {minutes:g} minutes)'}")
        self._warm_up()
        self.pool = WorkPool(self.config.ray.address, self.config.ray.workers)
        self.log.print(f"self-play hands: {self.pool.describe()}")
        writer = self._tensorboard()
        bar = self.log.bar = self._bar(state)
        started = time.perf_counter()
        try:
            while not self._spent(state, started, guard):
                begin = time.perf_counter()
                fitting = state["generation"] < settings.generations
                net = self.generation(state, net, rng, bar) if fitting else self.es_generation(state, net, rng)
                state["wall_seconds"] += time.perf_counter() - begin
                done = state["generation"] if fitting else state["es"]["generation"]
                if done % settings.curve_every == 0 and not self._spent(state, started, math.inf):
                    begin = time.perf_counter()
                    self._curve_point(state, net, writer, bar)
                    state["wall_seconds"] += time.perf_counter() - begin
                self._checkpoint(state, net, rng)
            begin = time.perf_counter()
            state["evaluation"] = self.final_evaluation(state, net, writer, bar)
            state["wall_seconds"] += time.perf_counter() - begin
            self._checkpoint(state, net, rng)
        except KeyboardInterrupt:
            self.log.print(f"interrupted: resume with skipbo train --resume {self.folder.path}")
            raise
        finally:
            self.log.close_bar()
            self.pool.close()
            if writer is not None:
                writer.close()
        model = self.folder.path / MODEL_FILE
        write_bytes_atomically(model, compact_json(self.model_document(state, net)))
        self._finish(state)
        return TrainResult(self.folder.path, model, state["games"], state["evaluation"], state["history"])

    def _spent(self, state: dict, started: float, guard: float) -> bool:
        """Whether the budget is spent: every generation trained, or the time guard passed (then said)."""
        settings = self.settings
        if state["generation"] >= settings.generations and state["es"]["generation"] >= settings.es_generations:
            return True
        if time.perf_counter() - started > guard:
            self.log.print(f"budget.max_minutes={self.config.budget.max_minutes:g} reached: stopping after generation "
                           f"{state['generation']} (resume to go on)")
            return True
        return False

    def generation(self, state: dict, net, rng: np.random.Generator, bar):
        """Play one generation's hands, store its data, fit the network; returns the float network."""
        import torch

        from training.neural.value_net import ValueNet, fit_lists, quantize

        settings = self.settings
        number = state["generation"] + 1
        begin = time.perf_counter()
        if number == 0 and settings.start is not None:
            return self._start(state)
        if number == 0:
            torch.manual_seed(int(rng.integers(2**62)))
            net = ValueNet(self.players, self.hidden)
        current = quantize(net)
        played = self.play(number, current, state, rng, bar)
        stored = self._stored_data(state, self.settings.window - 1)
        self._store_data(state, number, played.data)
        data = ListData.taken_from(stored + [played.data])
        fitted = time.perf_counter()
        fit = fit_lists(net, data, epochs=settings.teacher_epochs if number == 0 else settings.epochs,
                        batch_size=settings.batch_size, learning_rate=settings.learning_rate,
                        temperature=settings.temperature, generator=rng, weight_decay=settings.weight_decay,
                        outcome_weight=settings.outcome_weight)
        state["generation"] = number
        state["archive"].append(quantize(net).to_dict())
        state["archive"] = state["archive"][-settings.past_networks:]
        entry = {**played.entry, "generation": number, "lists_trained": data.lists, **fit,
                 "play_seconds": round(fitted - begin, 1), "fit_seconds": round(time.perf_counter() - fitted, 1)}
        state["log"].append(entry)
        self.log.print(f"generation {number:>3}: {entry['games']:,} hands ({entry['who']}), {entry['lists']:,} "
                       f"decisions listed; fitted on {data.lists:,}: the teacher's best stop is the network's in "
                       f"{fit['stop_agreement']:.1%}, its discard in {fit['discard_agreement']:.1%} "
                       f"({entry['play_seconds']:.0f} s playing, {entry['fit_seconds']:.0f} s fitting)")
        return net

    def _start(self, state: dict):
        """Generation 0 of a run with ``neural.start``: the float network of that model file."""
        from training.neural.value_net import dequantize

        network = read_model(model_path(self.settings.start))
        state["generation"] = 0
        state["archive"].append(network.to_dict())
        state["log"].append({"generation": 0, "start": self.settings.start})
        self.log.print(f"generation   0: the network of {self.settings.start}")
        return dequantize(network)

    def es_generation(self, state: dict, net, rng: np.random.Generator):
        """One sNES generation on ``net``'s output layer (the module docstring, 3.); returns ``net`` with the new mean."""
        import torch

        from training.neural.value_net import quantize

        settings, es = self.settings, state["es"]
        begin = time.perf_counter()
        mean = net.output.weight.detach().double().numpy()[0].copy()
        if es["sigma"] is None:
            es["sigma"] = [settings.es_sigma * float(np.sqrt(np.mean(mean ** 2)))] * len(mean)
        sigma = np.array(es["sigma"])
        z = mirrored_noise(rng, settings.es_population, len(mean))
        seeds = [int(seed) for seed in rng.integers(0, 2**62, size=len(settings.es_opponents))]
        threads = 1 if self.pool.on_ray else self.config.threads
        shared = (self.rules.to_dict(), quantize(net).to_dict(), settings.es_opponents, settings.es_games, seeds,
                  threads, settings.seat_orders)
        results = self.pool.map(play_es_candidate, [candidate.tolist() for candidate in mean + sigma * z], shared)
        rates = np.array([[score for score, _ in by_opponent] for by_opponent in results])
        games = sum(count for by_opponent in results for _, count in by_opponent)
        mean, sigma = snes_step(mean, sigma, z, rates.mean(axis=1))
        with torch.no_grad():
            net.output.weight[0] = torch.from_numpy(mean.astype(np.float32))
        es["generation"] += 1
        es["sigma"] = sigma.tolist()
        state["games"] += games
        self.log.bar.update(games)
        placement = {"nodes": dict(Counter(self.pool.last_nodes))} if self.pool.on_ray else {}
        entry = {"es_generation": es["generation"], "games": games, "mean_fitness": round(float(rates.mean()), 4),
                 "best_fitness": round(float(rates.mean(axis=1).max()), 4),
                 "by_opponent": {name: round(float(rate), 4) for name, rate in zip(settings.es_opponents, rates.mean(axis=0))},
                 "sigma": round(float(sigma.mean()), 5), "seconds": round(time.perf_counter() - begin, 1), **placement}
        state["log"].append(entry)
        by_opponent = ", ".join(f"{short_name(name)} {rate:.1%}" for name, rate in entry["by_opponent"].items())
        self.log.print(f"sNES generation {es['generation']:>3}: {settings.es_population} candidates, {games:,} games; "
                       f"mean win rate {entry['mean_fitness']:.1%} ({by_opponent}), the best candidate's "
                       f"{entry['best_fitness']:.1%}; spread {entry['sigma']:.4f} ({entry['seconds']:.0f} s)")
        return net

    def play(self, number: int, current: Network, state: dict, rng: np.random.Generator, bar) -> Generation:
        """The hands of generation ``number``: the teacher's (generation 0) or the network's at the tables."""
        settings = self.settings
        if number == 0:
            count = settings.teacher_games
            teacher = Seat(bot=kernel_bot_code(settings.teacher), recorded=True)
            seatings = [(teacher,) * self.players] * count
            networks = [current]
            who = f"{settings.teacher} against itself"
        else:
            count = settings.games
            seatings, networks = self.seatings(count, current, state, rng)
            who = "the network at " + ", ".join("+".join(t) for t in settings.tables)
        seeds = rng.integers(0, 2**62, size=count)
        data = self.play_chunks(networks, seatings, seeds, bar)
        state["games"] += count
        state["decisions"] += data.lists
        placement = {"nodes": dict(Counter(self.pool.last_nodes))} if self.pool.on_ray else {}
        return Generation(data, {"games": count, "lists": data.lists, "who": who,
                                 "seat0_win_rate": round(float(data.seat0_results.mean()), 4), **placement})

    def seatings(self, count: int, current: Network, state: dict, rng: np.random.Generator):
        """Hand ``i`` sits the network in seat ``(i // tables) % players`` at table ``i % tables``; ``self`` seats are
        the network too (recorded), ``past`` seats an earlier generation's network drawn for the generation."""
        tables = self.settings.tables
        past = (network_from_dict(state["archive"][int(rng.integers(len(state["archive"])))])
                if state["archive"] else current)
        networks = [current, past]
        seatings = []
        for i in range(count):
            table = tables[i % len(tables)]
            seat_of_network = (i // len(tables)) % self.players
            others = iter(table)
            seats = []
            for seat in range(self.players):
                spec = SELF if seat == seat_of_network else next(others)
                if spec == SELF:
                    seats.append(Seat(network=0, recorded=True))
                elif spec == PAST:
                    seats.append(Seat(network=1))
                else:
                    seats.append(Seat(bot=kernel_bot_code(spec)))
            seatings.append(tuple(seats))
        return seatings, networks

    def play_chunks(self, networks: list, seatings: list, seeds: np.ndarray, bar) -> ListData:
        """The hands in chunks of ``neural.chunk``: as Ray tasks (``ray.address``) or on ``threads`` threads here;
        the chunks' data in order (the same wherever they were played)."""
        chunk = self.settings.chunk
        settings = self.settings
        shared = (self.rules.to_dict(), [n.to_dict() for n in networks], kernel_bot_code(settings.teacher),
                  settings.list_size, settings.explore, settings.outcome_weight > 0)
        items = [(seatings[start:start + chunk], seeds[start:start + chunk]) for start in range(0, len(seeds), chunk)]
        if self.pool.on_ray:
            parts = self.pool.map(play_work_item, items, shared=shared)
            bar.update(len(seeds))
            return ListData.taken_from(parts)
        parts = [None] * len(items)
        with ThreadPoolExecutor(self.config.threads) as threads:
            futures = [threads.submit(play_work_item, shared, item) for item in items]
            for index, future in enumerate(futures):
                parts[index] = future.result()
                bar.update(len(parts[index].seat0_results))
        return ListData.taken_from(parts)

    # ------------------------------------------------------------------ data
    def _store_data(self, state: dict, number: int, data: ListData) -> None:
        name = data_file_name(number)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        write_bytes_atomically(self.data_dir / name, npz_bytes(data.arrays()))
        state["data_files"] = (state["data_files"] + [name])[-self.settings.window:]

    def _stored_data(self, state: dict, count: int) -> list[ListData]:
        """The data of the latest ``count`` stored generations, the oldest first."""
        width = len(input_indices(self.players))
        names = state["data_files"][max(0, len(state["data_files"]) - count):] if count > 0 else []
        return [self._read_data(name, width) for name in names]

    def _read_data(self, name: str, width: int) -> ListData:
        """The data file ``name``, checked (:func:`training.neural.data_files.read_data_file`) against the most hands
        a generation of this config plays."""
        settings = self.settings
        return read_data_file(self.data_dir / name, width, max(settings.teacher_games, settings.games),
                              settings.list_size)

    # ------------------------------------------------------------------ measuring
    def measure(self, net, opponents: list[str], games: int, seed: int) -> dict:
        """The quantized network's results against each opponent on duplicate deals (``skipbo evaluate``'s)."""
        from training.neural.value_net import quantize

        bot = NeuralBot.of(quantize(net), label="the run's network")
        return {opponent: self._play_against(bot, "neural", opponent, games, seed) for opponent in opponents}

    def _play_against(self, player, name: str, opponent: str, games: int, seed: int) -> dict:
        """``player``'s stats in ``games`` duplicate games against ``opponent``: one bot, or a table of the other
        seats (``planner+greedy+greedy``, :func:`table_seats`)."""
        result = play_table(player, name, opponent, self.rules, games, seed, self.config.threads,
                            self.settings.seat_orders)
        stats = stats_of(result, name)
        others = [other for other in result.names if other != name]
        if len(others) > 1:  # at a table, how each other seat did beside it
            shares = result.agent_stats()
            stats["others"] = {other: round(shares[other]["wins"] / max(shares[other]["games"], 1), 4)
                               for other in others}
        return stats

    def _curve_point(self, state: dict, net, writer, bar) -> None:
        settings = self.settings
        results = self.measure(net, settings.curve_opponents, settings.curve_games, self.config.seed + CURVE_SEED)
        self._record_point(state, results, settings.curve_games, writer, bar)

    def _record_point(self, state: dict, results: dict, games: int, writer, bar, final: bool = False) -> None:
        """A point of the learning curve: ``results`` (opponent -> stats) of ``games`` games each."""
        if state["teacher"] is None:
            state["teacher"] = self.teacher_reference()
        es = state["es"]["generation"]
        point = {"timesteps": state["games"], "generation": state["generation"], "decisions": state["decisions"],
                 "wall_seconds": round(state["wall_seconds"], 1), "results": results,
                 **({"es_generation": es} if es else {}), **({"final": True} if final else {})}
        state["history"].append(point)
        rates = ", ".join(f"vs {name} {s['win_rate']:.1%} [{s['ci95'][0]:.1%}, {s['ci95'][1]:.1%}]"
                          for name, s in results.items())
        bar.set_postfix({f"vs {short_name(name)}": f"{s['win_rate']:.0%}" for name, s in results.items()})
        what = "final evaluation, " if final else ""
        where = f"generation {state['generation']:>3}" + (f", sNES generation {es}" if es else "")
        self.log.print(f"{where} ({clock(state['wall_seconds'])}, {state['games']:,} hands): "
                       f"{what}{games} held-out duplicate games each: {rates}")
        if writer is not None:
            for name, stats in results.items():
                writer.add_scalar(f"win_rate/{name}", stats["win_rate"], state["games"])
            last = state["log"][-1] if state["log"] else {}
            for key in ("stop_loss", "stop_agreement", "discard_agreement"):
                if key in last:
                    writer.add_scalar(f"lists/{key}", last[key], state["games"])
            for key in ("mean_fitness", "best_fitness", "sigma"):
                if key in last:
                    writer.add_scalar(f"es/{key}", last[key], state["games"])
            writer.flush()

    def teacher_reference(self) -> dict:
        """The teacher's own results on the curve's deals (its line on the curve)."""
        settings = self.settings
        return {opponent: self._play_against(settings.teacher, "teacher", opponent, settings.curve_games,
                                             self.config.seed + CURVE_SEED)
                for opponent in settings.curve_opponents if opponent != settings.teacher}

    def final_evaluation(self, state: dict, net, writer, bar) -> dict:
        """The network against every final opponent on ``final_games`` deals of their own: the run's result and
        the curve's last point (no periodic point is measured at the budget's last generation)."""
        settings = self.settings
        results = self.measure(net, settings.final_bots, settings.final_games, self.config.seed + FINAL_SEED)
        self._record_point(state, results, settings.final_games, writer, bar, final=True)
        write_evaluation(self.folder.evaluation_path, self.folder.path / MODEL_FILE, self.config.seed, self.rules,
                         results, state["history"], generation=state["generation"], teacher=state["teacher"])
        return results

    # ------------------------------------------------------------------ files
    def model_document(self, state: dict, net) -> dict:
        from training.neural.value_net import quantize

        start, es = self.settings.start, state["es"]["generation"]
        steps = [f"started from {start}" if start else "fitted to the teacher's lists"]
        dagger = state["generation"]
        steps += [f"{dagger} DAgger generation{'s' * (dagger != 1)}"] if dagger > 0 else []
        steps += [f"{es} sNES generation{'s' * (es != 1)} on the output layer"] if es else []
        method = ", then ".join(steps)
        return {**quantize(net).to_dict(), "method": f"{method} (training/neural/trainer.py)", "teacher": self.settings.teacher,
                "es_generations": state["es"]["generation"],
                "rules": self.rules.to_dict(), "generation": state["generation"], "games": state["games"],
                "positions": state["decisions"], "wall_seconds": round(state["wall_seconds"], 1),
                "seed": self.config.seed, "command": self.folder.run_info().get("command"), "versions": versions()}

    def _checkpoint(self, state: dict, net, rng: np.random.Generator) -> None:
        state["rng"] = rng.bit_generator.state
        model = compact_json(self.model_document(state, net))
        buffer = io.BytesIO()
        np.savez(buffer, **{name: tensor.detach().numpy() for name, tensor in net.state_dict().items()})
        self.folder.save_checkpoint(max(state["generation"], 0) + state["es"]["generation"], {MODEL_FILE: model, WEIGHTS_FILE: buffer.getvalue()},
                                    state, self.config.checkpoint.keep)
        kept = set(state["data_files"])
        for old in self.data_dir.glob("gen-*.npz"):
            if old.name not in kept:
                old.unlink(missing_ok=True)

    def _finish(self, state: dict) -> None:
        references = {name: stats["win_rate"] for name, stats in (state["teacher"] or {}).items()}
        draw_learning_curve(state["history"], state["evaluation"], state["games"], self.folder.curve_path,
                            title=f"{self.config.name}: the neural bot's win rate (95% intervals)",
                            x_label="training hands (wall time in minutes on top)", references=references,
                            reference_label=f"{self.settings.teacher} (teacher)")
        write_json_atomically(self.folder.path / "learning_curve.json", {
            "history": state["history"], "teacher": state["teacher"], "evaluation": state["evaluation"]})
        es = state["es"]["generation"]
        model = self.folder.path / MODEL_FILE
        print_summary(self.log, state["evaluation"], f"{self.config.name}: the network after {state['generation']} "
                      f"generations{f' and {es} of sNES' if es else ''} ({clock(state['wall_seconds'])}, "
                      f"{state['games']:,} hands)", [
                          ("model", model),
                          ("", f"play it: skipbo play --opponents neural:model={model}; measure it: "
                               f"skipbo evaluate --agents neural:model={model} planner --games 2000"),
                          ("evaluation", self.folder.evaluation_path), ("curve", self.folder.curve_path)])

    # ------------------------------------------------------------------ output
    def _warm_up(self) -> None:
        """Compile (or load) the kernels before anything is timed: the kernel bots in a second process, the
        network's and the teacher's here meanwhile, then a tiny hand of every kind the run plays."""
        begin = time.perf_counter()
        from training.neural.value_net import zero_network

        helper = start_compiling_bots(self.rules.decks)
        try:
            net = zero_network(self.players, self.hidden)
            engine = VectorGame(self.rules, batch_size=4, auto_reset=False, threads=1)
            rows = np.arange(4)
            engine.deal(rows, rows + 1)
            observations = engine.observe(rows)
            network_warm_up(observations, engine.action_mask[rows].copy())
            neural_teacher.warm_up(engine.games, engine.action_mask, engine.cfg, rows, observations, net.arrays)
            engine.close()
        finally:
            helper.wait()
        teacher = kernel_bot_code(self.settings.teacher)
        seatings = [(Seat(network=0, recorded=True),) * self.players, (Seat(bot=teacher, recorded=True),) * self.players]
        play_list_games(self.rules, [net], seatings, np.array([1, 2]), teacher, self.settings.list_size)
        self.log.print(f"kernels ready in {time.perf_counter() - begin:.0f} s")

    def _tensorboard(self):
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:  # tensorboard is a dependency; a trimmed install still trains
            return None
        return SummaryWriter(str(self.folder.tensorboard_dir))

    def _bar(self, state: dict):
        """Hands played of the budget's (generation 0's and every later generation's): what ends the run."""
        settings = self.settings
        es_games = sum(scheduled_games(1 + len(table_seats(opponent)), self.rules, settings.es_games,
                                       settings.seat_orders) for opponent in settings.es_opponents)
        total = ((settings.teacher_games if settings.start is None else 0) + settings.games * settings.generations
                 + settings.es_generations * settings.es_population * es_games)
        return progress_bar(total, "hands (budget)", "hand", state["games"], self.progress, self.log.out)


def play_work_item(shared, item) -> ListData:
    """One chunk of a generation's hands (the work function of :mod:`training.distributed`): ``shared`` is
    ``(rules dict, network dicts, the teacher's kernel code, stop list size, exploring share, whether the
    decisions' positions are kept)``, ``item`` ``(seatings, deal seeds)``."""
    rules_dict, network_dicts, teacher, list_size, explore, positions = shared
    seatings, seeds = item
    networks = [network_from_dict(d) for d in network_dicts]
    return play_list_games(Rules.from_dict(rules_dict), networks, list(seatings), np.asarray(seeds), teacher,
                           list_size, explore, positions=positions)


def play_table(player, name: str, opponent: str, rules: Rules, games: int, seed: int, threads: int,
               seat_orders: str):
    """The tournament of ``games`` duplicate games on the batched engine between ``player`` (named ``name``) and
    ``opponent``: one bot, or a table of the other seats (``planner+greedy+greedy``, :func:`table_seats`)."""
    others = table_seats(opponent)
    return run_tournament([player, *others], rules, games=games, seed=seed, engine="vector", workers=threads,
                          names=[name, *agent_names(others)], seat_orders=seat_orders)


def play_es_candidate(shared, output: list) -> list[tuple[float, int]]:
    """One sNES candidate's games (the work function of :mod:`training.distributed`): ``shared`` is ``(rules dict,
    the quantized network's dict, opponents, games, one tournament seed per opponent, engine threads, seat
    orders)``, ``output`` the candidate's float output weights. Returns its score against each opponent (wins, and
    half the draws, per game) with the games played."""
    from training.neural.value_net import quantize_output

    rules_dict, network, opponents, games, seeds, threads, seat_orders = shared
    bot = NeuralBot.of(network_from_dict({**network, "output": quantize_output(np.asarray(output))}), "a candidate")
    rules = Rules.from_dict(rules_dict)
    scores = []
    for opponent, seed in zip(opponents, seeds):
        stats = play_table(bot, "neural", opponent, rules, games, seed, threads, seat_orders).agent_stats()["neural"]
        scores.append(((stats["wins"] + stats["draws"] / 2) / stats["games"], stats["games"]))
    return scores


def stats_of(result, name: str) -> dict:
    """``skipbo evaluate``'s stats of agent ``name`` in a two-agent tournament (games, wins, draws, ...)."""
    stats = result.agent_stats()[name]
    games, wins = stats["games"], stats["wins"]
    return {"games": games, "wins": wins, "draws": stats["draws"], "losses": games - wins - stats["draws"],
            "win_rate": wins / games if games else 0.0, "ci95": list(wilson_interval(wins, games))}
