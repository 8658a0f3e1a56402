"""Saved-game files: what ``skipbo play`` and ``skipbo serve`` write, and the one loader that reads them back.

A file holds one of three things:

- one hand: its game record (:mod:`skipbo_env.records`, ``Game.record()``) plus ``agents`` (who sat
  where), ``human_seat`` and ``final_state`` (``Game.to_dict()`` when the file was written)
  (:func:`hand_file`); ``skipbo evaluate --save-games`` writes bare records, extra keys allowed;
- a match, ``{"format": "skipbo-match/1", "seed", "rules", "agents", "human_seat", "hands": [...],
  "scores", "is_over", "winners", "current": ...}``, each finished hand as :func:`finished_hand`
  and ``current`` the unfinished one, if any (:func:`match_file`);
- a JSON list of game records.

:func:`load_hands` holds every check of such a file, for ``skipbo replay`` and the web replay view
alike, and gives its hands as :class:`SavedHand`, which replays a hand and says whether it ends as saved.
"""

from __future__ import annotations

import json
import os

from skipbo_env.files import FileRefused, read_file_bytes
from skipbo_env.game import Game
from skipbo_env.match import Match
from skipbo_env.records import RECORD_FORMAT
from skipbo_env.validation import check_plain_json, excerpt

MATCH_FORMAT = "skipbo-match/1"
MAX_FILE_BYTES = 64 * 2**20
"""The largest file :func:`load_hands` reads unless told less (a long match is a few hundred kilobytes)."""


# ---------------------------------------------------------------------- writing
def hand_file(game: Game, agents: list[str], human_seat: int) -> dict:
    """The saved file of a single hand: its record, who sat where, and its position when saved."""
    return {**game.record(), "agents": agents, "human_seat": human_seat, "final_state": game.to_dict()}


def finished_hand(game: Game) -> dict:
    """A finished hand of a match as the match file lists it (and a score sheet reads it)."""
    return {"outcome": game.outcome, "winners": list(game.winners), "points": list(game.points()),
            "record": game.record(), "final_state": game.to_dict()}


def match_file(match: Match, seed: int, agents: list[str], human_seat: int, finished: list[dict],
               current: Game | None) -> dict:
    """The saved file of a match: its ``finished`` hands (:func:`finished_hand`), the scores, and the
    ``current`` hand when one is unfinished."""
    data = {"format": MATCH_FORMAT, "seed": seed, "rules": match.rules.to_dict(), "agents": agents,
            "human_seat": human_seat, "hands": finished, "scores": list(match.scores),
            "is_over": match.is_over, "winners": list(match.winners)}
    if current is not None:
        data["current"] = {"record": current.record(), "final_state": current.to_dict()}
    return data


# ---------------------------------------------------------------------- reading
class GameFileRefused(ValueError):
    """A file that is not a saved game (or costs more than allowed); the message names the file and the problem."""


class SavedHand:
    """One hand of a file: its record, who played, and what it should end as (when saved).

    ``human_seat`` is the person's seat of a game played by ``skipbo play`` or ``skipbo serve``
    (``None`` when the file does not say)."""

    def __init__(self, record: dict, names: list[str], final_state: dict | None, label: str,
                 human_seat: int | None = None) -> None:
        self.record = record
        self.names = names
        self.final_state = final_state
        self.label = label
        self.human_seat = human_seat

    def start(self, moves: int = 0) -> Game:
        """The hand after its first ``moves`` actions (0: the deal), or :class:`GameFileRefused` naming
        what does not replay."""
        try:
            return Game.replay({**self.record, "actions": self.record["actions"][:moves]})
        except ValueError as error:
            where = f"{self.label}: " if self.label else ""
            raise GameFileRefused(f"{where}{error}") from None

    @property
    def saved_ending(self) -> bool:
        """Whether the file saved how the hand stands at the end (a final state or an outcome)."""
        return self.final_state is not None or "outcome" in self.record

    def differences(self, game: Game) -> str:
        """What differs between ``game`` (the hand replayed to its end) and what the file saved ("" when nothing)."""
        if self.final_state is not None:
            replayed = json.loads(json.dumps(game.to_dict()))
            different = sorted(key for key in set(replayed) | set(self.final_state)
                               if replayed.get(key) != self.final_state.get(key))
            if different:
                return f"the final state differs in {', '.join(different)}"
        record = self.record
        if "outcome" in record and record["outcome"] != game.outcome:
            return f"the saved outcome is {record['outcome']!r}, the replay ends {game.outcome!r}"
        if "winners" in record and list(record["winners"]) != list(game.winners):
            return f"the saved winners are {record['winners']}, the replay's are {list(game.winners)}"
        return ""


def load_hands(path: str, *, shown: str | None = None, max_bytes: int = MAX_FILE_BYTES,
               max_hands: int | None = None, max_actions: int | None = None) -> list[SavedHand]:
    """The hands a file holds, in order; :class:`GameFileRefused` for a file that is not a game file.

    Checks: a regular file (never a FIFO or a device) of at most ``max_bytes``, UTF-8 JSON nested at most
    ``skipbo_env.validation.MAX_DEPTH`` deep, and the shapes of the records; ``Game.replay``
    (:meth:`SavedHand.start`) checks each deal. ``max_hands`` and ``max_actions`` (all hands together)
    cap what replaying the file may cost. Messages name the file as ``shown`` (default: ``path``).
    """
    shown = path if shown is None else shown
    data = _read_json(path, shown, max_bytes)
    if isinstance(data, list):
        if not data:
            raise GameFileRefused(f"{shown} holds an empty list: no game to replay")
        _check_hand_count(len(data), max_hands, shown)
        hands = [_record_hand(item, f"game {i + 1} of {len(data)}", shown) for i, item in enumerate(data)]
    elif isinstance(data, dict) and data.get("format") == MATCH_FORMAT:
        hands = _match_hands(data, shown, max_hands)
    else:
        hands = [_record_hand(data, "", shown)]
    total = sum(len(hand.record["actions"]) for hand in hands)
    if max_actions is not None and total > max_actions:
        raise GameFileRefused(f"{shown} holds {total:,} moves, more than the {max_actions:,} replayed at once")
    return hands


def _read_json(path: str, shown: str, max_bytes: int):
    """The JSON a file holds; a missing, huge, non-regular, binary, broken or too deeply nested file is refused."""
    try:
        raw = read_file_bytes(path, max_bytes=max_bytes, what="replay file")
    except FileRefused as error:
        if os.path.isfile(path) and os.path.getsize(path) > max_bytes:
            raise GameFileRefused(f"{shown} is larger than a game file may be ({max_bytes:,} bytes)") from None
        reason = str(error).removeprefix(f"replay file {path!r} ").removeprefix("cannot be read: ")
        raise GameFileRefused(f"cannot read {shown}: {reason}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise GameFileRefused(f"{shown} is not JSON (it is not UTF-8 text)") from None
    except json.JSONDecodeError as error:
        raise GameFileRefused(f"{shown} is not JSON ({error})") from None
    except RecursionError:
        raise GameFileRefused(f"{shown} is nested too deeply to be a game file") from None
    except ValueError as error:  # an integer of more than 4,300 digits
        raise GameFileRefused(f"{shown} is not a game file: {excerpt(str(error))}") from None
    try:
        check_plain_json(data, shown)
    except ValueError as error:
        raise GameFileRefused(str(error)) from None
    return data


def _check_hand_count(count: int, max_hands: int | None, shown: str) -> None:
    if max_hands is not None and count > max_hands:
        raise GameFileRefused(f"{shown} holds {count:,} hands, more than the {max_hands:,} replayed at once")


def _record_hand(data, label: str, shown: str) -> SavedHand:
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise GameFileRefused(f"{shown} holds {excerpt(found)}, not a game: give a game record "
                              f"({RECORD_FORMAT}), a match file ({MATCH_FORMAT}) or a list of game records")
    record = _checked_record(data, f"{shown}{': ' + label if label else ''}")
    return SavedHand(record, _names(data, data), data.get("final_state"), label, _human_seat(data, data))


def _match_hands(data: dict, shown: str, max_hands: int | None) -> list[SavedHand]:
    entries = data.get("hands", [])
    if not isinstance(entries, list):
        raise GameFileRefused(f"{shown}: 'hands' must be a list of hands, not {type(entries).__name__}")
    entries = list(entries)
    if "current" in data:
        entries.append({**data["current"], "unfinished": True} if isinstance(data["current"], dict) else None)
    if not entries:
        raise GameFileRefused(f"{shown} is a match file with no hands to replay")
    _check_hand_count(len(entries), max_hands, shown)
    hands = []
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("record"), dict):
            raise GameFileRefused(f"{shown}: hand {number} is not a mapping with a game 'record'")
        label = f"hand {number}" + (" (left unfinished)" if entry.get("unfinished") else "")
        record = _checked_record(entry["record"], f"{shown}: {label}")
        if entry.get("final_state") is not None and not isinstance(entry["final_state"], dict):
            raise GameFileRefused(f"{shown}: {label}: 'final_state' must be a mapping")
        hands.append(SavedHand(record, _names(data, record), entry.get("final_state"), label,
                               _human_seat(data, record)))
    return hands


def _checked_record(record: dict, where: str) -> dict:
    """The record, refused where the fields replay reads itself have the wrong type; ``Game.replay`` checks
    the deal."""
    actions = record.get("actions")
    if not isinstance(actions, list) or not all(isinstance(a, int) and not isinstance(a, bool) for a in actions):
        raise GameFileRefused(f"{where}: 'actions' must be a list of integer action ids")
    for key, kind, words in (("final_state", dict, "a mapping"), ("winners", list, "a list of seats"),
                             ("agents", list, "a list of names")):
        if record.get(key) is not None and not isinstance(record[key], kind):
            raise GameFileRefused(f"{where}: {key!r} must be {words}, not {type(record[key]).__name__}")
    return record


def _names(data: dict, record: dict) -> list[str]:
    """Who sat where (``agents``, as skipbo play and skipbo evaluate save it), else nothing."""
    agents = data.get("agents") or record.get("agents") or []
    return [str(name) for name in agents] if isinstance(agents, list) else []


def _human_seat(data: dict, record: dict) -> int | None:
    seat = data.get("human_seat", record.get("human_seat"))
    return seat if isinstance(seat, int) and not isinstance(seat, bool) else None
