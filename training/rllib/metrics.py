"""Training metrics that show progress in a zero-sum game (RLlib's episode return is always 0 there).

When a hand ends, :class:`SelfPlayMetrics` logs, on the env runner that played it:

- ``selfplay/win_rate_vs_{opponents}``: 1 when the learner's seat won, else 0 (draws count as
  not won), per opponent line-up (the kinds of the other seats, sorted and joined by ``+``,
  ``greedy`` or ``self+snapshots``, the names the SB3 path uses);
- ``hand/turns`` and ``hand/actions``: the hand's length in turns and in actions (all seats);
- ``hand/draw_rate``: 1 for a drawn or truncated hand;
- ``hand/illegal_move_rate``: 1 for a hand an illegal id ended (0 with masked policies: a
  watch for a player that ignores the mask).

RLlib averages each over a window of :data:`WINDOW` hands and reports them under
``env_runners`` in every training result; the trainer writes them to TensorBoard.
"""

from __future__ import annotations

from ray.rllib.callbacks.callbacks import RLlibCallback

from training.rllib.seating import LEARNER

WINDOW = 200
WIN_RATE_PREFIX = "selfplay/win_rate_vs_"


def opponents_name(seating: list[tuple[str, str]]) -> str:
    """The opponent line-up of a seating: the other seats' kinds, sorted, joined by ``+``."""
    learner_seat = next(seat for seat, (kind, _) in enumerate(seating) if kind == LEARNER)
    return "+".join(sorted(kind for seat, (kind, _) in enumerate(seating) if seat != learner_seat))


class SelfPlayMetrics(RLlibCallback):
    """Logs the learner's result and the hand's length at the end of every hand.

    It also starts each env runner's own stream of seatings when the runner creates its
    environments (:meth:`training.rllib.seating.SeatDrawer.start_stream`).
    """

    def on_environment_created(self, *, env_runner, **kwargs) -> None:
        env_runner.config.policy_mapping_fn.start_stream(env_runner.worker_index)

    def on_episode_end(self, *, episode, env_runner, metrics_logger, **kwargs) -> None:
        seating = env_runner.config.policy_mapping_fn.pop(episode.id_)
        learner_seat = next(seat for seat, (kind, _) in enumerate(seating) if kind == LEARNER)
        info = hand_end_info(episode)
        winners = info.get("winners", ())  # one flag per seat, in possible_agents order
        won = learner_seat < len(winners) and bool(winners[learner_seat])
        log = metrics_logger.log_value
        log(WIN_RATE_PREFIX + opponents_name(seating), float(won), reduce="mean", window=WINDOW)
        log("hand/turns", float(info.get("turns", 0)), reduce="mean", window=WINDOW)
        log("hand/actions", float(episode.env_t), reduce="mean", window=WINDOW)
        log("hand/draw_rate", float(info.get("outcome") in ("draw", "truncated")), reduce="mean", window=WINDOW)
        log("hand/illegal_move_rate", float(info.get("illegal_move", False)), reduce="mean", window=WINDOW)


def hand_end_info(episode) -> dict:
    """The last info of a finished hand (every seat's holds the same outcome, winners and turns).

    Read from any seat that played: RLlib keeps no record of a seat whose first observation
    came with the end of the hand (a hand won before that seat's first turn).
    """
    return next(iter(episode.agent_episodes.values())).get_infos(-1)
