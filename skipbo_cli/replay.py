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
and one line saying why (:func:`skipbo_env.saved_games.load_hands` holds every check; the web replay
view uses it too).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.text import Text

from skipbo_env import Game
from skipbo_env.explain import move_words, outcome_sentence
from skipbo_env.files import check_creatable, write_bytes_atomically
from skipbo_env.saved_games import MAX_FILE_BYTES, GameFileRefused, SavedHand, load_hands
from skipbo_cli.table_view import Snapshot, move_effects, render_table, seat_name

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


def run(args: argparse.Namespace) -> int:
    hands = load_hands(args.file, max_bytes=MAX_FILE_BYTES)
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
        words = move_words(game, action, "You" if you else seat_name(names, game.current_seat), you=you)
        before = Snapshot.of(game)
        try:
            game.step(action)
        except ValueError as error:
            raise GameFileRefused(f"move {index + 1} does not replay: {error}") from None
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
        problems = hand.differences(game)
        if problems:
            self.console.print(Text(f"The replay does NOT match the saved game: {problems}", style="bold red"))
            return 1
        if hand.saved_ending:
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
    from skipbo_env.envs.picture import png_bytes  # matplotlib, loaded only for a picture

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


def _outcome_words(game: Game, names: list[str], viewer: int | None) -> str:
    if game.outcome is not None:
        return outcome_sentence(game, [seat_name(names, seat, viewer) for seat in range(game.num_players)])
    return f"The record stops here, during turn {game.turn + 1} (the hand was left unfinished)."
