"""The shipped players: one table (:data:`SHIPPED_PLAYERS`) that everything else reads.

Each row is one player the project ships in ``agents/pretrained/``: its name (what ``agents.load_policy`` and every
spec parser take), its kind (the bot that plays it, or a policy network), its file, how it was made (the shipped
config and the command), its result file on the leaderboard (``docs/leaderboard/``), the file that records what its
run cost, and its other names. A player's files and its leaderboard file carry its name.

- :mod:`agents.loading` loads a row by its name (:data:`SHIPPED`, :data:`PRETRAINED`);
- :mod:`agents.learned_parameters` and the learned bot's kernel (``agents.batched.learned``) read the rows of kind
  :data:`LEARNED` (one kernel variant each, in this order);
- :mod:`agents.neural` reads the rows of kind :data:`NEURAL`;
- :mod:`agents.spec_names` reads the other names (:data:`ALIASES`) and the old names (:data:`OLD_NAMES`);
- the leaderboard's table of how the training backends made their players (``training.leaderboard``) and
  ``docs/bots.md`` ("Shipped players and their names", checked by ``tests/docs``) read the whole table.

Adding a shipped player is its files in ``agents/pretrained/``, its leaderboard file, and its row here.
"""

from __future__ import annotations

import dataclasses
import os

FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pretrained")
"""Where the shipped players' files lie (``agents/pretrained/``)."""

LEARNED, NEURAL, PPO = "learned", "neural", "ppo"
"""The kinds of a shipped player: the ``learned`` bot with trained weights, the ``neural`` bot with a network, a
policy network trained by PPO (a saved model file, ``agents.saved_model``)."""
KINDS = (LEARNED, NEURAL, PPO)


@dataclasses.dataclass(frozen=True)
class ShippedPlayer:
    """One shipped player (paths from the repository root, except :attr:`file`)."""

    name: str
    """The name that says what it is: the bot that plays it (``learned-2p``), or the algorithm that trained it
    (``ppo-2p``), then its table size."""
    kind: str
    """One of :data:`KINDS`."""
    file: str
    """Its file in ``agents/pretrained/`` (named after it)."""
    what: str
    """What it is, one phrase (the table of ``docs/bots.md``)."""
    config: str
    """The shipped config its run trained (``configs/NAME.yaml``)."""
    command: str
    """The command that makes it again."""
    leaderboard: str
    """Its result file in ``docs/leaderboard/`` (its name, then its table size)."""
    record: str
    """The file whose record says what its run cost (its steps or hands and its time)."""
    other_names: tuple[str, ...] = ()
    """Documented names that play it too, silently (``pretrained-2p``: the strongest two-player player, a rung of
    the benchmark's ladder and the configs' teacher)."""
    old_names: tuple[str, ...] = ()
    """Earlier names: they still play it, with a one-line note naming :attr:`name`."""
    old_files: tuple[str, ...] = ()
    """Earlier names of its file in ``agents/pretrained/``: a path to one still loads it, with a one-line note."""

    @property
    def path(self) -> str:
        """The absolute path of its file."""
        return os.path.join(FOLDER, self.file)


SHIPPED_PLAYERS = (
    ShippedPlayer(
        "learned-2p", LEARNED, "learned-2p.json",
        "the `learned` bot (a turn search with sNES-trained weights), two players",
        config="configs/snes_2p.yaml", command="skipbo train snes_2p", leaderboard="learned-2p-2p.json",
        record="agents/pretrained/learned-2p.json", other_names=("pretrained-2p",)),
    ShippedPlayer(
        "learned-4p", LEARNED, "learned-4p.json",
        "the `learned` bot, the two-player weights trained on at four seats",
        config="configs/snes_4p.yaml", command="skipbo train snes_4p", leaderboard="learned-4p-4p.json",
        record="agents/pretrained/learned-4p.json", other_names=("pretrained-4p",)),
    ShippedPlayer(
        "neural-2p", NEURAL, "neural-2p.json",
        "the `neural` bot (a turn search valued by a network), two players",
        config="configs/neural_2p.yaml", command="skipbo train neural_2p", leaderboard="neural-2p-2p.json",
        record="agents/pretrained/neural-2p.json"),
    ShippedPlayer(
        "td-scratch-2p", NEURAL, "td-scratch-2p.json",
        "the `neural` bot with a network TD(λ) taught from self-play results alone (`backend: td`, "
        "`td.start: scratch`), two players",
        config="configs/td_scratch_2p.yaml", command="skipbo train td_scratch_2p",
        leaderboard="td-scratch-2p-2p.json", record="agents/pretrained/td-scratch-2p.json"),
    ShippedPlayer(
        "ppo-2p", PPO, "ppo-2p.zip",
        "a policy network (masked PPO after cloning the planner), two players",
        config="configs/ppo_from_planner_2p.yaml", command="skipbo train ppo_from_planner_2p",
        leaderboard="ppo-2p-2p.json", record="agents/pretrained/ppo-2p.zip", old_files=("skipbo-2p.zip",)),
)
"""Every shipped player, one row each (the learned rows' order is their kernel variants')."""

SHIPPED = {player.name: player for player in SHIPPED_PLAYERS}
"""Each shipped player by its name."""
ALIASES = {other: player.name for player in SHIPPED_PLAYERS for other in player.other_names}
"""The documented other names -> the player's name (silent)."""
OLD_NAMES = {old: player.name for player in SHIPPED_PLAYERS for old in player.old_names}
"""Earlier names -> the player's name (each use says the new name once)."""
OLD_FILES = {old: player for player in SHIPPED_PLAYERS for old in player.old_files}
"""Earlier file names in ``agents/pretrained/`` -> the player now in a file named after it."""


def of_kind(kind: str) -> dict[str, str]:
    """``{name: absolute path}`` of the shipped players of ``kind``, in table order."""
    return {player.name: player.path for player in SHIPPED_PLAYERS if player.kind == kind}


def renamed_file(path: str) -> ShippedPlayer | None:
    """The shipped player whose file ``path`` named before it carried the player's name (a path ending in
    ``agents/pretrained/OLD``, where no such file is), else ``None``."""
    folder, name = os.path.split(os.path.normpath(path))
    if name not in OLD_FILES or os.path.exists(path):
        return None
    return OLD_FILES[name] if os.path.basename(folder) == "pretrained" else None
