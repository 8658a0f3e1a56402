"""``skipbo replay FILE``: watch a saved game again, move by move.

Usage::

    skipbo replay games/play-20250101-120000-seed7.json        # Enter = next move, q = quit
    skipbo replay game.json --all                               # print it whole, no waiting
    skipbo replay match.json --hand 3 --by-turn --seat 0        # one hand, a turn per step, seat 0's view
    skipbo replay game.json --png table.png --move 40           # a picture of the table after 40 moves

FILE is any of: a game record (``Game.record()``, as ``skipbo play`` and
``skipbo evaluate --save-games`` write it, extra keys allowed), a match file of
``skipbo play --match`` (``"format": "skipbo-match/1"``: every hand in order), or a JSON list
of game records. Before each move the table is drawn (every hand open, or only what ``--seat``
sees) and the move is told in words with who played it. While stepping: Enter plays the next
move (or turn), ``b`` goes back one move, ``g N`` jumps to move N, ``a`` prints the rest without
waiting, ``q`` quits; any other key lists these.

``--png OUT.png`` draws the table as a picture instead (``skipbo_env.envs.picture``: building
piles, every stockpile top and size, the discard piles, the hand of ``--seat`` or else of the
seat to act) after ``--move N`` moves (0 = the deal; default: the final position) and writes it.

When the file holds the saved final position (``final_state``), or the hand's ``outcome`` and
``winners``, the replay checks that it arrives at exactly that and says so; a mismatch exits
with status 1. A file that is not a game file, or a flag that does not fit it, exits with status 2
and one line saying why (:func:`load_hands` holds every check; the web replay view uses it too).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from rich.console import Console
from rich.text import Text

from skipbo_env import Game
from skipbo_env.files import FileRefused, read_file_bytes
from skipbo_env.validation import check_plain_json, excerpt
from skipbo_env.explain import outcome_sentence
from skipbo_env.records import RECORD_FORMAT
from skipbo_cli.table_view import Snapshot, describe_move, move_effects, render_table, seat_name

MATCH_FORMAT = "skipbo-match/1"
MAX_FILE_BYTES = 64 * 2**20
"""The largest file replayed (a long match is a few hundred kilobytes)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a game record, a match file of skipbo play --match, "
                                                     "or a JSON list of game records")
    parser.add_argument("--all", action="store_true", help="print the whole game without waiting")
    parser.add_argument("--hand", type=int, metavar="N", help="only hand N (1 = first) of a match or list")
    parser.add_argument("--seat", type=int, metavar="N", help="show the table as seat N sees it (default: all hands open)")
    parser.add_argument("--by-turn", action="store_true", help="draw the table and wait once per turn, not per move")
    parser.add_argument("--no-color", action="store_true", help="plain text, no colors or styles")
    parser.add_argument("--png", metavar="OUT.png", help="write a picture of the table (after --move N moves) and exit")
    parser.add_argument("--move", type=int, metavar="N",
                        help="with --png: the table after N moves (0 = the deal; default: the final position)")


class ReplayFileRefused(ValueError):
    """A file ``skipbo replay`` and the web replay view refuse; the message names the file and the problem."""


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
        """The hand after its first ``moves`` actions (0: the deal), or :class:`ReplayFileRefused` naming
        what does not replay."""
        try:
            return Game.replay({**self.record, "actions": self.record["actions"][:moves]})
        except ValueError as error:
            where = f"{self.label}: " if self.label else ""
            raise ReplayFileRefused(f"{where}{error}") from None


def load_hands(path: str, *, shown: str | None = None, max_bytes: int | None = None,
               max_hands: int | None = None, max_actions: int | None = None) -> list[SavedHand]:
    """The hands a file holds, in order; :class:`ReplayFileRefused` for a file that is not a game file.

    Every check of a replay file is here, for ``skipbo replay`` and the web replay view alike: a
    regular file (never a FIFO or a device) of at most ``max_bytes`` (default :data:`MAX_FILE_BYTES`),
    UTF-8 JSON nested at most ``skipbo_env.validation.MAX_DEPTH`` deep, and the shapes of the records;
    ``Game.replay`` (:meth:`SavedHand.start`) checks each deal. ``max_hands`` and ``max_actions`` (all
    hands together) cap what replaying the file may cost. Messages name the file as ``shown``
    (default: ``path``).
    """
    shown = path if shown is None else shown
    data = _read_json(path, shown, MAX_FILE_BYTES if max_bytes is None else max_bytes)
    if isinstance(data, list):
        if not data:
            raise ReplayFileRefused(f"{shown} holds an empty list: no game to replay")
        _check_hand_count(len(data), max_hands, shown)
        hands = [_record_hand(item, f"game {i + 1} of {len(data)}", shown) for i, item in enumerate(data)]
    elif isinstance(data, dict) and data.get("format") == MATCH_FORMAT:
        hands = _match_hands(data, shown, max_hands)
    else:
        hands = [_record_hand(data, "", shown)]
    total = sum(len(hand.record["actions"]) for hand in hands)
    if max_actions is not None and total > max_actions:
        raise ReplayFileRefused(f"{shown} holds {total:,} moves, more than the {max_actions:,} replayed at once")
    return hands


def _read_json(path: str, shown: str, max_bytes: int):
    """The JSON a file holds; a missing, huge, non-regular, binary, broken or too deeply nested file is refused."""
    try:
        raw = read_file_bytes(path, max_bytes=max_bytes, what="replay file")
    except FileRefused as error:
        if os.path.isfile(path) and os.path.getsize(path) > max_bytes:
            raise ReplayFileRefused(f"{shown} is larger than a game file may be ({max_bytes:,} bytes)") from None
        reason = str(error).removeprefix(f"replay file {path!r} ").removeprefix("cannot be read: ")
        raise ReplayFileRefused(f"cannot read {shown}: {reason}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ReplayFileRefused(f"{shown} is not JSON (it is not UTF-8 text)") from None
    except json.JSONDecodeError as error:
        raise ReplayFileRefused(f"{shown} is not JSON ({error})") from None
    except RecursionError:
        raise ReplayFileRefused(f"{shown} is nested too deeply to be a game file") from None
    except ValueError as error:  # an integer of more than 4,300 digits
        raise ReplayFileRefused(f"{shown} is not a game file: {excerpt(str(error))}") from None
    try:
        check_plain_json(data, shown)
    except ValueError as error:
        raise ReplayFileRefused(str(error)) from None
    return data


def _check_hand_count(count: int, max_hands: int | None, shown: str) -> None:
    if max_hands is not None and count > max_hands:
        raise ReplayFileRefused(f"{shown} holds {count:,} hands, more than the {max_hands:,} replayed at once")


def _record_hand(data, label: str, shown: str) -> SavedHand:
    if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise ReplayFileRefused(f"{shown} holds {excerpt(found)}, not a game: give a game record "
                                f"({RECORD_FORMAT}), a match file ({MATCH_FORMAT}) or a list of game records")
    record = _checked_record(data, f"{shown}{': ' + label if label else ''}")
    return SavedHand(record, _names(data, data), data.get("final_state"), label, _human_seat(data, data))


def _match_hands(data: dict, shown: str, max_hands: int | None) -> list[SavedHand]:
    entries = data.get("hands", [])
    if not isinstance(entries, list):
        raise ReplayFileRefused(f"{shown}: 'hands' must be a list of hands, not {type(entries).__name__}")
    entries = list(entries)
    if "current" in data:
        entries.append({**data["current"], "unfinished": True} if isinstance(data["current"], dict) else None)
    if not entries:
        raise ReplayFileRefused(f"{shown} is a match file with no hands to replay")
    _check_hand_count(len(entries), max_hands, shown)
    hands = []
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("record"), dict):
            raise ReplayFileRefused(f"{shown}: hand {number} is not a mapping with a game 'record'")
        label = f"hand {number}" + (" (left unfinished)" if entry.get("unfinished") else "")
        record = _checked_record(entry["record"], f"{shown}: {label}")
        if entry.get("final_state") is not None and not isinstance(entry["final_state"], dict):
            raise ReplayFileRefused(f"{shown}: {label}: 'final_state' must be a mapping")
        hands.append(SavedHand(record, _names(data, record), entry.get("final_state"), label,
                               _human_seat(data, record)))
    return hands


def _checked_record(record: dict, where: str) -> dict:
    """The record, refused where the fields replay reads itself have the wrong type; ``Game.replay`` checks
    the deal."""
    actions = record.get("actions")
    if not isinstance(actions, list) or not all(isinstance(a, int) and not isinstance(a, bool) for a in actions):
        raise ReplayFileRefused(f"{where}: 'actions' must be a list of integer action ids")
    for key, kind, words in (("final_state", dict, "a mapping"), ("winners", list, "a list of seats"),
                             ("agents", list, "a list of names")):
        if record.get(key) is not None and not isinstance(record[key], kind):
            raise ReplayFileRefused(f"{where}: {key!r} must be {words}, not {type(record[key]).__name__}")
    return record


def _names(data: dict, record: dict) -> list[str]:
    """Who sat where (``agents``, as skipbo play and skipbo evaluate save it), else nothing."""
    agents = data.get("agents") or record.get("agents") or []
    return [str(name) for name in agents] if isinstance(agents, list) else []


def _human_seat(data: dict, record: dict) -> int | None:
    seat = data.get("human_seat", record.get("human_seat"))
    return seat if isinstance(seat, int) and not isinstance(seat, bool) else None


def run(args: argparse.Namespace) -> int:
    hands = load_hands(args.file)
    if args.hand is not None:
        if not 1 <= args.hand <= len(hands):
            raise ValueError(f"--hand {args.hand}: {args.file} holds hands 1 to {len(hands)}")
        hands = [hands[args.hand - 1]]
    if args.png is not None:
        return write_picture(hands[0], args.png, args.move, args.seat)
    if args.move is not None:
        raise ValueError("--move N goes with --png OUT.png (stepping takes g N)")
    console = Console(highlight=False, markup=False, color_system=None if args.no_color else "auto")
    viewer = ReplayViewer(console, wait=not args.all, seat=args.seat, by_turn=args.by_turn)
    status = 0
    for hand in hands:
        result = viewer.show(hand)
        if result is None:
            console.print("Replay stopped.")
            return status
        status = max(status, result)
    return status


class ReplayViewer:
    """Steps through hands, drawing the table and telling each move."""

    def __init__(self, console: Console, wait: bool, seat: int | None, by_turn: bool) -> None:
        self.console = console
        self.wait = wait
        self.seat = seat
        self.by_turn = by_turn

    def show(self, hand: SavedHand) -> int | None:
        """Replay one hand; 0 when it ends as saved, 1 when it does not, ``None`` if the viewer quits."""
        game = hand.start()
        if self.seat is not None and not 0 <= self.seat < game.num_players:
            raise ValueError(f"--seat {self.seat} is not a seat: use 0 to {game.num_players - 1}")
        actions = hand.record["actions"]
        self.console.rule(f"Replay{': ' + hand.label if hand.label else ''} · seed {hand.record.get('seed')} · "
                          f"{len(actions)} moves")
        names = hand.names if len(hand.names) == game.num_players else [""] * game.num_players
        index = 0
        while index < len(actions):
            target = self._show_move(game, names, index, len(actions), actions[index])
            if target is None:
                return None
            if target != index + 1:
                game = hand.start(target)
            index = target
        return self._finish(game, hand, names)

    def _show_move(self, game: Game, names: list[str], index: int, total: int, action: int) -> int | None:
        """Show and play move ``index``; the index of the move to show next (``None``: the viewer quits)."""
        new_turn = index == 0 or game.plays_this_turn == 0
        if not self.by_turn or new_turn:
            self.console.print()
            self.console.print(render_table(game, self.seat, names, f"Move {index + 1} of {total}", self.console.width))
        you = game.current_seat == self.seat
        words = describe_move(game, action, "You" if you else seat_name(names, game.current_seat), you=you)
        before = Snapshot.of(game)
        try:
            game.step(action)
        except ValueError as error:
            raise ReplayFileRefused(f"move {index + 1} does not replay: {error}") from None
        line = Text(f"{index + 1:>4}. ")
        line.append(words, style="bold")
        line.append(f" (#{action})", style="dim")
        for effect in move_effects(before, action, game, self.seat, names):
            line.append(" · ")
            line.append(effect, style="cyan")
        self.console.print(line)
        ends_step = not self.by_turn or game.is_over or game.current_seat != before.seat or game.turn != before.turn
        return self._next(ends_step and index + 1 < total, index, total)

    def _next(self, pause: bool, index: int, total: int) -> int | None:
        """When stepping, ask which move to show next (after move ``index``); ``None`` when the viewer quits."""
        if not (self.wait and pause):
            return index + 1
        while True:
            try:
                answer = input("Enter: next, b: back, g N: go to move N, a: all the rest, q: quit> ").strip().lower()
            except EOFError:
                return None
            target = _answer_target(answer, index, total)
            if target == "all":
                self.wait = False
                return index + 1
            if isinstance(target, int) or target is None:
                return target
            self.console.print(target)

    def _finish(self, game: Game, hand: SavedHand, names: list[str]) -> int:
        self.console.print()
        self.console.print(render_table(game, self.seat, names, "Final position", self.console.width))
        self.console.print(Text(_outcome_words(game, names, self.seat), style="bold"))
        problems = _differences(game, hand)
        if problems:
            self.console.print(Text(f"The replay does NOT match the saved game: {problems}", style="bold red"))
            return 1
        if hand.final_state is not None or "outcome" in hand.record:
            self.console.print("The replay matches the saved game exactly.")
        return 0


KEYS_HELP = ("keys: Enter = next move, b = back one move, g N = go to move N (1 to {total}), a = all the rest "
             "without waiting, q = quit")


def _answer_target(answer: str, index: int, total: int):
    """What a stepping answer asks for after move ``index``: the move to show next, ``None`` (quit),
    ``"all"``, or the text to print when the answer is not a key (the list of keys)."""
    if answer == "":
        return index + 1
    if answer in ("q", "quit"):
        return None
    if answer == "a":
        return "all"
    if answer == "b":
        return index - 1 if index > 0 else "b: this is the first move, there is none before it"
    words = answer.split()
    if words[0] == "g" and len(words) == 2 and words[1].isdigit() and 1 <= int(words[1]) <= total:
        return int(words[1]) - 1
    if words[0] == "g":
        return f"g N: N is a move number from 1 to {total}"
    return f"{answer!r} is not a key; " + KEYS_HELP.format(total=total)


def write_picture(hand: SavedHand, path: str, moves: int | None, seat: int | None) -> int:
    """Write a PNG of the table after ``moves`` moves of ``hand`` (all of them when ``None``)."""
    from skipbo_env.envs.picture import png_bytes
    from skipbo_env.files import check_creatable, write_bytes_atomically

    actions = hand.record["actions"]
    if moves is not None and not 0 <= moves <= len(actions):
        raise ValueError(f"--move {moves}: this hand has moves 0 to {len(actions)}")
    game = hand.start(len(actions) if moves is None else moves)
    if seat is not None and not 0 <= seat < game.num_players:
        raise ValueError(f"--seat {seat} is not a seat: use 0 to {game.num_players - 1}")
    names = [name or f"seat {s}" for s, name in enumerate(hand.names)] if len(hand.names) == game.num_players else None
    check_creatable(Path(path).resolve().parent)
    write_bytes_atomically(path, png_bytes(game, viewer=seat, names=names))
    print(f"wrote {path}: the table after {game.actions_taken} of {len(actions)} moves")
    return 0


def _differences(game: Game, hand: SavedHand) -> str:
    """What differs between the replayed game and what the file saved ("" when nothing)."""
    if hand.final_state is not None:
        replayed = json.loads(json.dumps(game.to_dict()))
        different = sorted(key for key in set(replayed) | set(hand.final_state)
                           if replayed.get(key) != hand.final_state.get(key))
        if different:
            return f"the final state differs in {', '.join(different)}"
    record = hand.record
    if "outcome" in record and record["outcome"] != game.outcome:
        return f"the saved outcome is {record['outcome']!r}, the replay ends {game.outcome!r}"
    if "winners" in record and list(record["winners"]) != list(game.winners):
        return f"the saved winners are {record['winners']}, the replay's are {list(game.winners)}"
    return ""


def _outcome_words(game: Game, names: list[str], viewer: int | None) -> str:
    if game.outcome is not None:
        return outcome_sentence(game, [seat_name(names, seat, viewer) for seat in range(game.num_players)])
    return f"The record stops here, during turn {game.turn + 1} (the hand was left unfinished)."
