"""The saved games of the games folder, read safely for the replay view.

A file is named by its path relative to the folder (``web-....json``, ``eval/game-000001.json``).
:meth:`GamesFolder.path_of` resolves a name and refuses anything that does not end inside the
folder: ``..``, absolute paths, symlinks that point out, names that are not ``.json`` files.

A file holds one or more hands, as ``skipbo replay`` reads them: a game record (``skipbo play``,
``skipbo serve``, ``skipbo evaluate --save-games``; extra keys allowed), a match file
(``skipbo-match/1``: every finished hand, then the unfinished one if any), or a JSON list of records.
Each file goes through exactly the checks of ``skipbo replay`` (:func:`skipbo_env.saved_games.load_hands`:
a regular file, UTF-8 JSON of bounded depth, the shapes of the records; ``Game.replay`` checks each
deal), and one request replays at most :data:`MAX_HANDS` hands and :data:`MAX_ACTIONS` moves of a
file of at most :data:`MAX_FILE_BYTES`, so no file costs more than about a second of CPU.
"""

from __future__ import annotations

from pathlib import Path

from skipbo_env import Game
from skipbo_env.explain import move_words
from skipbo_env.saved_games import GameFileRefused, SavedHand, load_hands
from skipbo_web.table import open_view

MAX_FILE_BYTES = 4 * 2**20
"""The largest file the replay view reads (a long match file is a few hundred kilobytes)."""
MAX_HANDS = 200
MAX_ACTIONS = 20_000
"""The most hands, and moves in all, one request replays: each costs a deal or a move of the engine."""
MAX_LISTED = 2000
MAX_NAME_LENGTH = 1024


def shown_name(name: str) -> str:
    """A file name as a message quotes it: whole up to 100 characters, else its start."""
    return repr(name) if len(name) <= 100 else repr(name[:100]) + f" (and {len(name) - 100} more characters)"


class ReplayError(ValueError):
    """A file name or a file the replay view refuses; ``status`` is the HTTP status to answer."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class GamesFolder:
    """The folder of saved games (``skipbo serve --games DIR``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def _root(self) -> Path:
        return self.folder.resolve()

    def names(self) -> list[dict]:
        """Every saved game file, newest first: ``{"name", "size", "modified"}``."""
        root = self._root()
        if not root.is_dir():
            return []
        found = []
        for path in root.rglob("*.json"):
            if path.name.startswith(".") or not self._inside(path, root) or not path.is_file():
                continue
            stat = path.stat()
            found.append({"name": path.relative_to(root).as_posix(), "size": stat.st_size, "modified": stat.st_mtime})
        found.sort(key=lambda item: (-item["modified"], item["name"]))
        return found[:MAX_LISTED]

    @staticmethod
    def _inside(path: Path, root: Path) -> bool:
        try:
            return path.resolve().is_relative_to(root)
        except (OSError, ValueError):
            return False

    def path_of(self, name) -> Path:
        """The file a name means, or :class:`ReplayError` (400 for a bad name, 404 for no such file)."""
        if not isinstance(name, str) or not name or "\x00" in name:
            raise ReplayError(400, "give the file as ?file=NAME, a name from GET /api/replays")
        if len(name) > MAX_NAME_LENGTH:
            raise ReplayError(400, f"file name {shown_name(name)} is longer than {MAX_NAME_LENGTH} characters: "
                                   "use a name from GET /api/replays")
        relative = Path(name)
        if relative.is_absolute() or ".." in relative.parts or "\\" in name:
            raise ReplayError(400, f"file {shown_name(name)} is not a name inside the games folder: use a name from GET /api/replays")
        root = self._root()
        path = root / relative
        if not self._inside(path, root):
            raise ReplayError(400, f"file {shown_name(name)} leads outside the games folder: refused")
        try:
            found = path.suffix == ".json" and path.resolve().is_file()
        except OSError as error:  # a part of the name longer than the file system allows, say
            raise ReplayError(400, f"file {shown_name(name)} cannot be a saved game ({error.strerror})") from None
        if not found:
            raise ReplayError(404, f"no saved game {shown_name(name)} in the games folder: use a name from GET /api/replays")
        return path.resolve()

    def read(self, name) -> list[SavedHand]:
        """The hands of a file, checked as ``skipbo replay`` checks them (:func:`skipbo_env.saved_games.load_hands`),
        within the caps of one request (module docstring)."""
        path = self.path_of(name)
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ReplayError(413, f"file {shown_name(name)} is larger than {MAX_FILE_BYTES // 2**20} MiB")
        try:
            return load_hands(str(path), shown=shown_name(name), max_bytes=MAX_FILE_BYTES, max_hands=MAX_HANDS,
                              max_actions=MAX_ACTIONS)
        except GameFileRefused as error:
            raise ReplayError(422, str(error)) from None


def replayed(hand: SavedHand) -> tuple[Game, list[int]]:
    """The hand's starting position and its actions; :class:`ReplayError` if the deal does not replay."""
    try:
        return hand.start(), hand.record["actions"]
    except ValueError as error:
        raise ReplayError(422, f"the game record does not replay: {error}") from None


def seat_names(hand: SavedHand, num_players: int) -> list[str]:
    names = hand.names
    if len(names) != num_players:
        return [f"seat {seat}" for seat in range(num_players)]
    return [name if name != "human" else "person" for name in names]


def hand_summary(hand: SavedHand) -> dict:
    """A hand's moves in words (who, what) and how it ended: the replay view's move list."""
    game, actions = replayed(hand)
    names = seat_names(hand, game.num_players)
    moves = []
    for index, action in enumerate(actions):
        seat, turn = game.current_seat, game.turn + 1
        try:
            words = move_words(game, action, you=False) if action in game.legal_actions() else ""
            game.step(action)
        except ValueError as error:
            raise ReplayError(422, f"move {index + 1} of the record does not replay: {error}") from None
        moves.append({"index": index + 1, "seat": seat, "who": names[seat], "turn": turn, "words": words})
    return {"label": hand.label, "names": names, "human_seat": hand.human_seat, "num_moves": len(actions),
            "seed": _seed_text(hand.record.get("seed")), "moves": moves, "outcome": game.outcome,
            "winners": list(game.winners), "rules": game.rules.to_dict(),
            "matches_saved": _matches_saved(game, hand)}


def _seed_text(seed) -> str | None:
    """The seed as a string of digits (a 64-bit seed is not exact as a JavaScript number)."""
    return None if seed is None else str(seed)


def _matches_saved(game: Game, hand: SavedHand) -> bool | None:
    """Whether the replay ends exactly as the file saved it (``None`` when it saved no ending)."""
    return not hand.differences(game) if hand.saved_ending else None


def position_after(hand: SavedHand, moves: int) -> dict:
    """The open table after the first ``moves`` moves of the hand."""
    game, actions = replayed(hand)
    if isinstance(moves, bool) or not isinstance(moves, int) or not 0 <= moves <= len(actions):
        raise ReplayError(400, f"move {moves!r} is not in this hand: use 0 to {len(actions)}")
    for action in actions[:moves]:
        try:
            game.step(action)
        except ValueError as error:
            raise ReplayError(422, f"the record does not replay: {error}") from None
    view = open_view(game, seat_names(hand, game.num_players))
    view["move"] = moves
    return view
