"""``skipbo play``: a person plays one seat in the terminal against any policies.

Usage::

    skipbo play                                   # one hand against greedy, 2 players
    skipbo play --opponents planner greedy        # 3 players: you, planner, greedy
    skipbo play --players 4 --opponents random    # 4 players: you and three random bots
    skipbo play --opponents planner --stock-size 10 --seed 7
    skipbo play --opponents greedy --match        # a whole match to 500 with the score sheet
    skipbo play --partners --players 4 --opponents greedy   # partners: seat 2 is your partner

Opponents are anything ``agents.load_policy`` accepts (a bot name, a saved model file,
``module:Class``, ``file.py:Class``, with options). They fill the other seats in order; one
opponent given for a larger table (``--players N``) fills every other seat. Every rule setting
is a flag (``--stock-size``, ``--partners``, ...; see ``skipbo play --help``).

The table shows the building piles with the value each needs next, every stockpile top and
size, every discard pile and your hand; your legal moves are listed with the keys to type
(``s1``, ``h5 2``, ``t3 1``, ``d9 4``; ``help`` lists them all, see
:mod:`skipbo_cli.move_parser`). The opponents' moves are printed one by one as they happen
(``--delay`` seconds apart).

``undo`` takes back your last play of the current turn, and again, back to the start of the
turn, by replaying the game record without it. It stops at a play that showed you a card you
had not seen: a play from a stockpile (the next card is turned up) or a play that emptied your
hand (five new cards are drawn). Taking those back would let you peek, so the engine keeps
them. A discard ends the turn and is never taken back.

Every game is saved as JSON when it ends or when you leave (``quit``, Ctrl-C, Ctrl-D):
``--save PATH`` or ``games/play-<time>-seed<seed>.json``, in the format of
:mod:`skipbo_env.saved_games` (a single hand: its game record, who sat where and its final
state; a match: ``skipbo-match/1``, every hand). ``skipbo replay FILE`` shows either move by move.

``--autoplay POLICY`` lets a policy choose your moves (to watch bots play, or to test);
``--no-color`` prints plain text.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.text import Text

from agents.loading import RUNS_CODE, load_policy, short_name
from agents.registry import BOTS
from skipbo_env import Game, IllegalActionError, Match, Rules
from skipbo_env.actions import PARTNER_STOCK_SOURCE, STOCK_SOURCE, is_play, play_source
from skipbo_env.encoding import observe
from skipbo_env.explain import move_words, outcome_sentence
from skipbo_env.files import check_creatable, json_text
from skipbo_env.saved_games import finished_hand, hand_file, match_file
from skipbo_cli.move_parser import HELP_TEXT, MoveInputError, key_for_action, parse_command
from skipbo_cli import arguments
from skipbo_cli.rule_flags import add_rule_flags, rules_from_args
from skipbo_cli.table_view import (
    Snapshot,
    discard_hint,
    legal_move_rows,
    move_effects,
    render_table,
    score_sheet,
    seat_name,
    team_label,
)

HUMAN = "human"
PROMPT = "your move> "
DEFAULT_SAVE_FOLDER = "games"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = (f"In the game:\n{HELP_TEXT}\n\nThe game is saved when it ends or when you leave; "
                     "watch it again with: skipbo replay FILE")
    parser.add_argument("--opponents", nargs="+", default=["greedy"], metavar="POLICY",
                        help=f"the other seats, in order: bot names ({', '.join(BOTS)}), saved model files, "
                             f"module:Class or file.py:Class, each optionally named: mine=bots/mybot.py:StockFirst "
                             f"(default: greedy); {RUNS_CODE}")
    parser.add_argument("--seat", type=int, default=0, metavar="N", help="your seat, 0 to players-1 (default 0)")
    parser.add_argument("--seed", type=arguments.seed, default=None,
                        help="seed of the deal and of the opponents, >= 0 (default: a fresh one, printed)")
    parser.add_argument("--match", action="store_true",
                        help="play a whole match (to 500 unless --match-end says otherwise) instead of one hand; "
                             "--match-end target:N or rounds:N imply it")
    parser.add_argument("--save", metavar="PATH", type=arguments.output_file(".json"),
                        help=f"where to save the game, a .json file (default {DEFAULT_SAVE_FOLDER}/play-<time>-seed<S>.json)")
    parser.add_argument("--delay", type=arguments.seconds, default=0.3, metavar="SECONDS",
                        help="pause after each opponent move, >= 0 (default 0.3)")
    parser.add_argument("--no-color", action="store_true", help="plain text, no colors or styles")
    parser.add_argument("--autoplay", metavar="POLICY", help="let POLICY choose your moves (watch bots, or test)")
    add_rule_flags(parser)


def run(args: argparse.Namespace) -> int:
    rules = rules_from_args(args, num_players=args.num_players or 1 + len(args.opponents))
    if args.save is None:
        check_creatable(Path(DEFAULT_SAVE_FOLDER))
    seat_specs = _seat_specs(args.opponents, rules.num_players, args.seat)
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 1_000_000)
    console = Console(highlight=False, markup=False, color_system=None if args.no_color else "auto")
    policies = _load_policies(seat_specs, args.autoplay, args.seat, seed)
    if args.autoplay is not None:
        seat_specs[args.seat] = args.autoplay
    if sys.stdin.isatty():
        import readline  # noqa: F401  (line editing and history for input())
    # Ctrl-C leaves the table (the game is saved) even when this process was started with SIGINT
    # ignored, as the background jobs of a non-interactive shell are
    signal.signal(signal.SIGINT, signal.default_int_handler)
    match = args.match or (args.match_end is not None and "single_hand" not in args.match_end)
    names = [short_name(spec) for spec in seat_specs]
    session = PlaySession(console, rules, seed, args.seat, policies, names, match=match,
                          delay=args.delay, save_path=args.save, autoplay=args.autoplay is not None)
    return session.run()


def _seat_specs(opponents: list[str], num_players: int, human_seat: int) -> list[str]:
    """The policy spec of every seat, ``"human"`` at the person's seat."""
    if not 0 <= human_seat < num_players:
        raise ValueError(f"--seat {human_seat} is not a seat: use 0 to {num_players - 1}")
    others = num_players - 1
    if len(opponents) == 1:
        opponents = opponents * others
    if len(opponents) != others:
        raise ValueError(f"{len(opponents)} opponents for {num_players} players: give "
                         f"{others} (one per other seat) or one to fill every other seat")
    specs = list(opponents)
    specs.insert(human_seat, HUMAN)
    return specs


def _load_policies(specs: list[str], autoplay: str | None, human_seat: int, seed: int) -> dict:
    """Seat -> policy for every seat a policy plays; a bad spec raises the loader's ``ValueError``."""
    chosen = {seat: spec for seat, spec in enumerate(specs) if seat != human_seat}
    if autoplay is not None:
        chosen[human_seat] = autoplay
    return {seat: load_policy(spec, seed=seed + seat) for seat, spec in chosen.items()}


class PlaySession:
    """One hand or one match, the person at ``human_seat`` typing moves, policies at the others."""

    def __init__(self, console: Console, rules: Rules, seed: int, human_seat: int, policies: dict,
                 specs: list[str], match: bool, delay: float, save_path: str | None, autoplay: bool = False) -> None:
        self.console = console
        self.rules = rules
        self.seed = seed
        self.human = human_seat
        self.policies = policies
        self.names = ["you" if seat == human_seat else spec for seat, spec in enumerate(specs)]
        self.specs = specs
        self.delay = delay
        self.autoplay = autoplay
        self.save_path = Path(save_path) if save_path else Path(DEFAULT_SAVE_FOLDER) / (
            f"play-{time.strftime('%Y%m%d-%H%M%S')}-seed{seed}.json")
        self._policy_seeds = np.random.default_rng([seed, 1])
        self.match = Match(rules, seed=seed) if match else None
        self._single = None if match else Game.new(rules, seed=seed)
        self._finished_hands: list[dict] = []
        self._undo_floor = 0
        self._undo_refusal = ""
        self._last_seat = None

    # ------------------------------------------------------------------ the game in play
    @property
    def game(self) -> Game:
        return self.match.game if self.match is not None else self._single

    def _replace_game(self, game: Game) -> None:
        if self.match is not None:
            self.match.game = game
        else:
            self._single = game

    def _step(self, action: int) -> None:
        (self.match or self.game).step(action)

    def _over(self) -> bool:
        return self.match.is_over if self.match is not None else self._single.is_over

    # ------------------------------------------------------------------ the loop
    def run(self) -> int:
        """Play until the hand or match ends or the person leaves; the game is saved either way."""
        self._print_intro()
        try:
            self._start_hand()
            while not self._over():
                game = self.game
                if game.current_seat == self.human and not self.autoplay:
                    if not self._human_action(game):
                        self.console.print("You leave the table.")
                        return self._save_and_report(0)
                else:
                    self._policy_action(game)
                if game.is_over and not self._hand_over(game):
                    return self._save_and_report(0)
        except (KeyboardInterrupt, EOFError) as stop:
            self.console.print("\nInterrupted: leaving the table." if isinstance(stop, KeyboardInterrupt) else
                               "\nEnd of input: leaving the table.")
            return self._save_and_report(130 if isinstance(stop, KeyboardInterrupt) else 0)
        except IllegalActionError as error:
            self.console.print(Text(f"A policy broke the rules: {error}", style="bold red"))
            return self._save_and_report(1)
        return self._save_and_report(0)

    def _print_intro(self) -> None:
        rules = self.rules
        what = f"a match ({_match_end_words(rules)})" if self.match is not None else "one hand"
        seats = ", ".join(f"seat {s}: {'you' if s == self.human else name}" for s, name in enumerate(self.names))
        self.console.print(Text(f"Skip-Bo: {what}, {rules.num_players} players, stockpiles of {rules.stock_size}"
                                f"{', partners' if rules.partners else ''}. Seed {self.seed}.", style="bold"))
        self.console.print(f"{seats}. Type help for the keys, quit to save and leave.")

    def _start_hand(self) -> None:
        for policy in self.policies.values():
            reset = getattr(policy, "reset", None)
            if callable(reset):
                reset(int(self._policy_seeds.integers(2**63)))
        self._last_seat = None
        if self.match is not None:
            self.console.rule(f"Hand {self.match.hand_number}")

    # ------------------------------------------------------------------ the person
    def _human_action(self, game: Game) -> bool:
        """Read commands until one move is taken; ``False`` when the person quits."""
        if self._last_seat != self.human:
            self._last_seat = self.human
            self._undo_floor = len(game.record()["actions"])
            self._undo_refusal = "there is no play of yours to take back this turn"
            self._show_table(game, moves=True)
        while True:
            line = input(PROMPT)
            try:
                command = parse_command(line, game)
            except MoveInputError as error:
                self._say_no(str(error))
                continue
            if command.kind == "quit":
                return False
            if command.kind == "help":
                self.console.print(HELP_TEXT)
            elif command.kind == "moves":
                self._show_moves(game)
            elif command.kind == "table":
                self._show_table(game, moves=True)
            elif command.kind == "undo":
                self._undo(game)
                return True
            elif self._try_move(game, command.action):
                return True

    def _try_move(self, game: Game, action: int) -> bool:
        """Take the move, or say why the engine refuses it (the game unchanged)."""
        before = Snapshot.of(game)
        words = move_words(game, action, "You")
        try:
            self._step(action)
        except IllegalActionError as error:
            self._say_no(_reason(error))
            return False
        self._narrate(words, before, action, game)
        self._note_reveal(game, before, action)
        if not game.is_over and game.current_seat == self.human and game.turn == before.turn:
            self._show_table(game, moves=True)
        return True

    def _note_reveal(self, game: Game, before: Snapshot, action: int) -> None:
        """Move the undo floor past a play that showed a new card (see the module docstring)."""
        if not is_play(action):
            return
        source = play_source(action)
        drew = game.hand_sizes[self.human] > before.hand_sizes[self.human] - (1 if source < STOCK_SOURCE else 0)
        if source in (STOCK_SOURCE, PARTNER_STOCK_SOURCE) or drew:
            self._undo_floor = len(game.record()["actions"])
            what = "turned up a new stockpile card" if not drew else "drew new cards into your hand"
            self._undo_refusal = f"your last play {what}, so it stays (taking it back would let you peek)"

    def _undo(self, game: Game) -> None:
        record = game.record()
        if game.current_seat != self.human or len(record["actions"]) <= self._undo_floor:
            self._say_no(f"nothing to undo: {self._undo_refusal}")
            return
        taken_back = record["actions"][-1]
        record["actions"] = record["actions"][:-1]
        previous = Game.replay(record)
        self._replace_game(previous)
        self.console.print(f"Taken back: {move_words(previous, taken_back, 'You')}.")
        self._show_table(previous, moves=True)

    def _say_no(self, reason: str) -> None:
        self.console.print(Text(f"✗ {reason}", style="red"))

    # ------------------------------------------------------------------ the policies
    def _policy_action(self, game: Game) -> None:
        seat = game.current_seat
        if self._last_seat != seat:
            self._last_seat = seat
            label = "You (autoplay)" if seat == self.human else seat_name(self.names, seat)
            self.console.print(Text(f"— {label}, turn {game.turn + 1} —", style="bold"))
        action = int(self.policies[seat].act(observe(game, seat)))
        before = Snapshot.of(game)
        if seat == self.human:
            words = move_words(game, action, "You")
        else:
            words = move_words(game, action, seat_name(self.names, seat), you=False)
        self._step(action)  # an illegal choice raises IllegalActionError, reported by run()
        self._narrate(words, before, action, game)
        if self.delay:
            time.sleep(self.delay)

    # ------------------------------------------------------------------ output
    def _narrate(self, words: str, before: Snapshot, action: int, game: Game) -> None:
        effects = move_effects(before, action, game, self.human, self.names)
        line = Text("  › ")
        line.append(words, style="bold" if before.seat == self.human else "")
        for effect in effects:
            line.append(" · ")
            line.append(effect, style="cyan")
        self.console.print(line)

    def _title(self) -> str:
        if self.match is None:
            return "Skip-Bo"
        totals = ", ".join(f"{team_label(self.rules, s, self.names, self.human)} {score}"
                           for s, score in enumerate(self.match.scores) if self.rules.team_of(s) == s)
        return f"Skip-Bo · hand {self.match.hand_number} · scores: {totals}"

    def _show_table(self, game: Game, moves: bool) -> None:
        self.console.print()
        self.console.print(render_table(game, self.human, self.names, self._title(), self.console.width))
        if moves and not game.is_over:
            self._show_moves(game)

    def _show_moves(self, game: Game) -> None:
        rows = legal_move_rows(game, key_for_action)
        self.console.print(Text("Your moves (type the key):", style="bold"))
        for key, words in rows:
            self.console.print(f"  {key:<7} {words}")
        hint = discard_hint(game, key_for_action)
        if hint:
            self.console.print(f"  {hint}")

    # ------------------------------------------------------------------ ends of hands
    def _hand_over(self, game: Game) -> bool:
        """Report a finished hand; in a match, ``True`` to go on to the next hand."""
        self._show_table(game, moves=False)
        self.console.print(Text(_outcome_words(game, self.names, self.human), style="bold"))
        self._finished_hands.append(finished_hand(game))
        if self.match is None:
            return True
        self.console.print(score_sheet(self.rules, self._finished_hands, self.names, self.human))
        if self.match.is_over:
            winners = " and ".join(seat_name(self.names, s, self.human) for s in self.match.winners)
            self.console.print(Text(f"The match is over: {winners} won.", style="bold"))
            return True
        if not self.autoplay and input(f"Enter for hand {self.match.hand_number}, q to leave> ").strip().lower() in (
                "q", "quit"):
            return False
        self._start_hand()
        return True

    # ------------------------------------------------------------------ saving
    def saved_data(self) -> dict:
        """What the file holds: a hand's record or the match's hands (see the module docstring)."""
        if self.match is None:
            return hand_file(self._single, self.specs, self.human)
        current = None if self.match.is_over else self.match.game
        return match_file(self.match, self.seed, self.specs, self.human, self._finished_hands, current)

    def _save_and_report(self, code: int) -> int:
        path = self.save_path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json_text(self.saved_data()) + "\n")
        except OSError as error:
            print(f"skipbo play: could not save the game to {path}: {error}", file=sys.stderr)
            return code or 1
        self.console.print(f"Game saved to {path}  (watch it again: skipbo replay {path})")
        return code


def _reason(error: IllegalActionError) -> str:
    """The engine's message without the action id: "can't play ...: building pile 1 needs a 3 ..."."""
    text = str(error)
    head, sep, why = text.partition(" is not legal: ")
    if not sep:
        return text
    described = head[head.find("(") + 1:head.rfind(")")] if "(" in head else head
    return f"can't {described}: {why}"


def _outcome_words(game: Game, names: list[str], viewer: int) -> str:
    return outcome_sentence(game, [seat_name(names, seat, viewer) for seat in range(game.num_players)])


def _match_end_words(rules: Rules) -> str:
    end = rules.match_end
    if "target" in end:
        return f"first to {end['target']} points"
    if "rounds" in end:
        return f"{end['rounds']} hands"
    return "one hand"
