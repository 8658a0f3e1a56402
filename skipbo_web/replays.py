"""The saved games of the games folder, read safely for the replay view.

A file is named by its path relative to the folder (``web-....json``, ``eval/game-000001.json``).
:meth:`GamesFolder.path_of` resolves a name and refuses anything that does not end inside the
folder: ``..``, absolute paths, symlinks that point out, names that are not ``.json`` files.

A file holds one or more hands, as ``skipbo replay`` reads them: a game record (``skipbo play``,
``skipbo serve``, ``skipbo evaluate --save-games``; extra keys allowed), a match file
(``skipbo-match/1``: every finished hand, then the unfinished one if any), or a JSON list of records.
"""

from __future__ import annotations

import json
from pathlib import Path

from skipbo_env import Game
from skipbo_env.records import RECORD_FORMAT
from skipbo_web.sessions import MATCH_FORMAT
from skipbo_web.table import move_words, open_view

MAX_FILE_BYTES = 32 * 2**20
MAX_LISTED = 2000


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
        relative = Path(name)
        if relative.is_absolute() or ".." in relative.parts or "\\" in name:
            raise ReplayError(400, f"file {name!r} is not a name inside the games folder: use a name from GET /api/replays")
        root = self._root()
        path = root / relative
        if not self._inside(path, root):
            raise ReplayError(400, f"file {name!r} leads outside the games folder: refused")
        if path.suffix != ".json" or not path.resolve().is_file():
            raise ReplayError(404, f"no saved game {name!r} in the games folder: use a name from GET /api/replays")
        return path.resolve()

    def read(self, name) -> list[dict]:
        """The hands of a file: ``{"record", "names", "final_state", "label", "human_seat"}`` each."""
        path = self.path_of(name)
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ReplayError(413, f"file {name!r} is larger than {MAX_FILE_BYTES // 2**20} MiB")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ReplayError(422, f"file {name!r} is not a JSON game file ({error})") from None
        return hands_of(data, name)


def hands_of(data, name: str) -> list[dict]:
    """The hands a file's JSON holds, in order (module docstring)."""
    if isinstance(data, list):
        return [_hand(item, f"game {i + 1} of {len(data)}", name, None) for i, item in enumerate(data)]
    if isinstance(data, dict) and data.get("format") == MATCH_FORMAT:
        entries = [entry for entry in data.get("hands", []) if isinstance(entry, dict)]
        current = data.get("current")
        if isinstance(current, dict):
            entries.append({**current, "unfinished": True})
        hands = []
        for number, entry in enumerate(entries, start=1):
            label = f"hand {number}" + (" (left unfinished)" if entry.get("unfinished") else "")
            hands.append(_hand(entry.get("record"), label, name, data, entry.get("final_state")))
        return hands
    return [_hand(data, "", name, data)]


def _hand(record, label: str, name: str, container, final_state=None) -> dict:
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        found = record.get("format") if isinstance(record, dict) else type(record).__name__
        raise ReplayError(422, f"file {name!r} holds {found!r}, not a game: the replay view reads game records "
                               f"({RECORD_FORMAT}), match files ({MATCH_FORMAT}) and lists of game records")
    source = container if isinstance(container, dict) else {}
    agents = source.get("agents") or record.get("agents") or []
    human = source.get("human_seat", record.get("human_seat"))
    return {"record": record, "names": [str(a) for a in agents] if isinstance(agents, list) else [],
            "final_state": final_state if final_state is not None else record.get("final_state"),
            "label": label, "human_seat": human if isinstance(human, int) else None}


def replayed(hand: dict) -> tuple[Game, list[int]]:
    """The hand's starting position and its actions; :class:`ReplayError` if the record does not replay."""
    record = hand["record"]
    actions = record.get("actions")
    if not isinstance(actions, list):
        raise ReplayError(422, "the game record has no list of actions")
    try:
        game = Game.replay({**record, "actions": []})
    except (ValueError, TypeError, KeyError) as error:
        raise ReplayError(422, f"the game record does not replay: {error}") from None
    return game, actions


def seat_names(hand: dict, num_players: int) -> list[str]:
    names = hand["names"]
    if len(names) != num_players:
        return [f"seat {seat}" for seat in range(num_players)]
    return [name if name != "human" else "person" for name in names]


def hand_summary(hand: dict) -> dict:
    """A hand's moves in words (who, what) and how it ended: the replay view's move list."""
    game, actions = replayed(hand)
    names = seat_names(hand, game.num_players)
    moves = []
    for index, action in enumerate(actions):
        seat, turn = game.current_seat, game.turn + 1
        try:
            words = move_words(game, action) if action in game.legal_actions() else ""
            game.step(action)
        except ValueError as error:
            raise ReplayError(422, f"move {index + 1} of the record does not replay: {error}") from None
        moves.append({"index": index + 1, "seat": seat, "who": names[seat], "turn": turn, "words": words})
    return {"label": hand["label"], "names": names, "human_seat": hand["human_seat"], "num_moves": len(actions),
            "seed": hand["record"].get("seed"), "moves": moves, "outcome": game.outcome,
            "winners": list(game.winners), "rules": game.rules.to_dict(),
            "matches_saved": _matches_saved(game, hand)}


def _matches_saved(game: Game, hand: dict) -> bool | None:
    """Whether the replay ends exactly as the file saved it (``None`` when it saved no ending)."""
    if hand["final_state"] is not None:
        return json.loads(json.dumps(game.to_dict())) == hand["final_state"]
    record = hand["record"]
    if "outcome" in record:
        return record["outcome"] == game.outcome and list(record.get("winners", [])) == list(game.winners)
    return None


def position_after(hand: dict, moves: int) -> dict:
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
