"""What a teacher-start TD run's correction has learned: how wide it spreads in the search, and what it predicts.

From one checkpoint of a ``td.start: teacher`` run (read only: nothing is written there), two measurements on
fresh two-player self-play hands of the run's rules, deals from ``--seed`` on:

- **the spread**: ``--spread-hands`` hands of the checkpoint's own play (no exploring). Over the stops and turn ends
  recorded, the standard deviation of ``10 (r(position) - r(turn start))``, the correction as the search weighs it
  in the teacher's units (``training.td.residual.CORRECTION_UNIT``), beside that of the teacher's own value ``v``,
  and of the baseline (in logits);
- **what it predicts**: ``--hands`` further hands of the teacher's own moves (the model with ``r`` zeroed). The
  binary cross-entropy of their results under the model, minus that under the model with ``r`` zeroed (the same
  baseline and calibration): below zero, ``r`` predicts the results of the teacher's play better than nothing does.
  Its standard error is over the seat-hands.

- **the drawn moves' targets** (``--drawn-hands``, a run with ``td.rank_share``): that many hands of the
  checkpoint's own training play (its opponents, exploring and drawn moves; the same deals from ``--seed`` on). For
  each λ of the drawn moves' target (``td.drawn_lam``: 1, 0.9, 0.8, 0.5, 0), the standard deviation of the target
  about the model's chance of the stop drawn (the noise a fit sees), and the target's slope on the teacher's ``v``
  of the stop drawn less the mean ``v`` of the stops kept (per 100 of the teacher's units, with its standard
  error): how the target follows what the teacher's ranking says.

Reading it: a correction that predicts the teacher's own results better (a gain) while the curve against
``pretrained-2p`` falls is right where the data is and wrong where the search takes it: on the stops the teacher
did not choose, which no result checks.

    python experiments/td_correction.py long_runs/td-teacher-2p-bound05-20261206-055800/checkpoints/step_001500032-2

(a kept run's one checkpoint: ``checkpoints/latest.json`` names it; a finished run's checkpoints are in the history,
``long_runs/REMOVED.md``, e.g. ``git archive 17c08b277a long_runs/td-teacher-2p-20261205-031743 | tar -x -C /tmp``
for the third teacher run's, read as ``/tmp/long_runs/td-teacher-2p-20261205-031743/checkpoints/step_000016384``)
"""

from __future__ import annotations

import copy
import dataclasses
import math
import sys
import time
from pathlib import Path

import numpy as np

from skipbo_cli.arguments import bounded_int, seed
from skipbo_cli.script import MAX_COUNT, ScriptParser, count, run
from training.checkpoint import RunFolder
from training.config import load_config
from skipbo_env.provenance import machine, versions

FRESH_DEALS = 10_000_000
"""The first deal of the measurement hands by default: far beyond the deals of any run's training."""


def restored(checkpoint: Path):
    """The learner of the run whose checkpoint folder is ``checkpoint``, with that checkpoint's weights."""
    from training.td.trainer import TDTrainer

    folder = RunFolder.open(checkpoint.parent.parent)
    config = load_config(folder.config_path)
    if config.backend != "td" or config.td.start != "teacher":
        raise ValueError(f"{folder.path}: not a td.start: teacher run (its correction is what this measures)")
    return TDTrainer(config, folder, False, sys.stdout).load(checkpoint)[0]


def self_play(learner, net, hands: int, first_deal: int):
    """``hands`` self-play hands of ``net``'s moves, deals from ``first_deal``: the recorded rows, their results
    and the positions of each seat-hand."""
    import torch

    settings = dataclasses.replace(learner.settings, hands=hands, opponents={"self": 1.0}, explore=0.0,
                                   stock_sizes=())
    player = type(learner)(settings)
    player.net = net
    player.hands_played = first_deal
    sequences, results = player.play()
    rows, targets, _ = player.returns(sequences, results)
    return torch.as_tensor(rows), torch.as_tensor(targets, dtype=torch.float32), [len(p) for p in sequences.values()]


def spread(net, rows) -> dict:
    """The standard deviations, over ``rows``, of the correction in the search's units, of ``v`` and of the
    baseline."""
    import torch

    from training.td.residual import CORRECTION_UNIT

    with torch.no_grad():
        change = net.correction(rows[:, :net.block]) - net.correction(net.turn_starts(rows))
        return {"correction": float((CORRECTION_UNIT * change).std()), "v": float(rows[:, net.block].std()),
                "baseline": float(net.turn_start_value(rows).std())}


def gain(net, zeroed, rows, targets, lengths) -> tuple[float, float]:
    """The mean cross-entropy of the results under ``net`` less under ``zeroed``, and its standard error over the
    seat-hands (``lengths``: their positions, in the rows' order)."""
    import torch

    loss = torch.nn.functional.binary_cross_entropy_with_logits
    with torch.no_grad():
        difference = (loss(net(rows), targets, reduction="none") - loss(zeroed(rows), targets, reduction="none")).numpy()
    per_hand = np.add.reduceat(difference, np.cumsum([0, *lengths[:-1]]))
    return float(difference.mean()), float(per_hand.std() * math.sqrt(len(per_hand)) / len(difference))


DRAWN_LAMBDAS = (1.0, 0.9, 0.8, 0.5, 0.0)
"""The λ of the drawn moves' targets measured."""


def drawn_targets(learner, hands: int, first_deal: int) -> tuple[int, dict]:
    """The drawn moves of ``hands`` hands of ``learner``'s training play, deals from ``first_deal`` (a batch of at
    most ``td.hands`` at a time): how many, and for each of :data:`DRAWN_LAMBDAS` the target's standard deviation
    about the model's chance of the stop drawn and its slope on the drawn stop's ``v`` less the mean of the kept
    (per 100 units) with its standard error."""
    import torch

    original = learner.settings
    learner.settings = dataclasses.replace(original, hands=min(hands, original.hands))
    targets: dict[float, list] = {lam: [] for lam in DRAWN_LAMBDAS}
    predicted, centred = [], []
    for start in range(first_deal, first_deal + hands, learner.settings.hands):
        learner.hands_played = start
        sequences, results = learner.play()
        if not learner.drawn:
            continue
        _, _, chances = learner.returns(sequences, results)
        with torch.no_grad():
            predicted.append(torch.sigmoid(learner.net.drawn_logits(learner.drawn)).numpy())
        centred.extend(d.values[d.pick] - d.values.mean() for d in learner.drawn)
        for lam in DRAWN_LAMBDAS:
            learner.settings = dataclasses.replace(learner.settings, drawn_lam=lam)
            targets[lam].append(learner.drawn_targets(sequences, results, chances))
    learner.settings = original
    x = np.array(centred) / 100.0
    if len(x) < 3 or not (x * x).sum():
        return len(x), {}
    predictions = np.concatenate(predicted)
    measures = {}
    for lam in DRAWN_LAMBDAS:
        y = np.concatenate(targets[lam])
        spread = float(np.std(y - predictions))
        y = y - y.mean()
        slope = float((x * y).sum() / (x * x).sum())
        error = math.sqrt(float(((y - slope * x) ** 2).sum()) / (len(x) - 2) / float((x * x).sum()))
        measures[lam] = {"sd": spread, "slope": slope, "se": error}
    return len(x), measures


def main(argv: list[str] | None = None) -> int:
    import torch

    parser = ScriptParser(prog="td_correction.py", description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="a checkpoint folder of a td.start: teacher run (RUN/checkpoints/step_N)")
    parser.add_argument("--spread-hands", type=count, default=16, help="hands of the checkpoint's play (default 16)")
    parser.add_argument("--hands", type=count, default=64, help="hands of the teacher's moves (default 64)")
    parser.add_argument("--drawn-hands", type=bounded_int(0, MAX_COUNT), default=0,
                        help="hands of its training play whose drawn moves' targets are measured (a run with "
                             "td.rank_share; default 0: none)")
    parser.add_argument("--seed", type=seed, default=FRESH_DEALS, help=f"the first deal (default {FRESH_DEALS:,})")
    args = parser.parse_args(argv)
    checkpoint = Path(args.checkpoint)
    if not (checkpoint / "state.json").is_file():
        raise ValueError(f"{args.checkpoint}: not a checkpoint folder (it has no state.json)")
    torch.set_num_threads(1)
    begin = time.process_time()
    learner = restored(checkpoint)
    if args.drawn_hands and not learner.settings.rank_share:
        raise ValueError(f"--drawn-hands {args.drawn_hands}: {checkpoint} is of a run without drawn moves "
                         "(td.rank_share 0); give --drawn-hands 0 or a run with td.rank_share")
    zeroed = copy.deepcopy(learner.net)
    with torch.no_grad():
        zeroed.output.weight.zero_()
        zeroed.output.bias.zero_()
    print(f"command: python experiments/td_correction.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    print(f"checkpoint: {checkpoint} ({learner.hands_played:,} hands); versions: {versions()}; machine: {machine()}")
    rows, _, _ = self_play(learner, learner.net, args.spread_hands, args.seed)
    widths = spread(learner.net, rows)
    print(f"spread over {len(rows):,} positions of {args.spread_hands} hands of its play: correction "
          f"{widths['correction']:.2f} of the teacher's units, v {widths['v']:.1f}, baseline {widths['baseline']:.3f} "
          "logits (standard deviations)")
    rows, targets, lengths = self_play(learner, zeroed, args.hands, args.seed + args.spread_hands)
    mean, error = gain(learner.net, zeroed, rows, targets, lengths)
    print(f"cross-entropy with r less without, on {len(rows):,} positions of {args.hands} hands of the teacher's "
          f"moves: {mean:+.2e} nats (se {error:.1e}, over {len(lengths)} seat-hands)")
    if args.drawn_hands:
        drawn, measures = drawn_targets(learner, args.drawn_hands, args.seed)
        print(f"drawn moves: {drawn:,} in {args.drawn_hands:,} hands of its training play" + ("; too few to measure"
              if not measures else ""))
        for lam, measure in measures.items():
            print(f"  target at λ={lam:g}: sd about the model {measure['sd']:.3f}; slope on v less the kept stops' "
                  f"mean {measure['slope']:+.4f} a 100 units (se {measure['se']:.4f})")
    print(f"CPU: {time.process_time() - begin:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(run(main))
