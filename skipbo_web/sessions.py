"""Games in play, held in memory: one :class:`GameSession` per hand or match, in a :class:`SessionStore`.

A session plays one seat for the person and the other seats with policies. Opponents move only
when the client asks (:meth:`GameSession.advance`, one move per call), so the browser shows them
one at a time at the speed the person picks. ``undo`` works as in ``skipbo play``: it takes back
the person's last play of the current turn by replaying the game record without it, and never goes
past a play that showed a new card (a play from a stockpile turns one up; a play that empties the
hand draws five), nor past a discard, which ends the turn.

When a game ends, is left (``quit``), expires, or the server stops, it is saved in the games folder in the format of
``skipbo play`` (:mod:`skipbo_env.saved_games`), so ``skipbo replay`` and the replay view read it. Before that the record
is never sent: it holds the seed, from which every hidden card follows.

The store drops a finished game ``finished_ttl`` seconds after its last request and any game
``idle_ttl`` seconds after its last request (saving an unfinished one first), and holds at most
``max_games``; when full, a new game takes the place of the longest-unused finished one, and is
refused (503) when every held game is still in play.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np

from skipbo_env import Game, IllegalActionError, Match, Rules, observe
from skipbo_env.explain import move_words
from skipbo_env.files import json_text, write_text_atomically
from skipbo_env.saved_games import finished_hand, hand_file, match_file
from skipbo_env.validation import excerpt
from skipbo_web.table import action_from_move, move_of_action, seat_view

HUMAN = "human"
LOG_LENGTH = 60
PLAYING, HAND_OVER, OVER = "playing", "hand_over", "over"
LOG = logging.getLogger("skipbo_web")


class Refused(Exception):
    """A request the session or store turns down: an HTTP status and a one-line message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class GameSession:
    """One hand or match: the person at ``human_seat``, ``policies`` (seat -> policy) at the others.

    ``names`` is what each seat is called in views and in the saved file (``"human"`` at the
    person's seat, as ``skipbo play`` saves it).
    """

    def __init__(self, session_id: str, rules: Rules, seed: int, human_seat: int, policies: dict,
                 names: list[str], match: bool) -> None:
        self.id = session_id
        self.rules = rules
        self.seed = seed
        self.human = human_seat
        self.policies = policies
        self.names = names
        self.lock = threading.Lock()
        self.status = PLAYING
        self.ending = ""  # why the game is over: "finished", "quit", "expired", or a policy's error
        self.saved_path: Path | None = None
        self.log: list[dict] = []
        self.finished_hands: list[dict] = []
        self._policy_seeds = np.random.default_rng([seed, 1])
        self.match = Match(rules, seed=seed) if match else None
        self._single = None if match else Game.new(rules, seed=seed)
        self._shown: Game | None = None  # a finished hand of a match, shown until the person goes on
        self._undo_floor = 0
        self._undo_refusal = ""
        self._turn_key = None
        self._start_hand()

    # ------------------------------------------------------------------ the game in play
    @property
    def game(self) -> Game:
        return self.match.game if self.match is not None else self._single

    @property
    def is_over(self) -> bool:
        return self.status == OVER

    def _start_hand(self) -> None:
        """Every policy starts the hand with a fresh seed from the session's seed (as ``skipbo play``)."""
        for policy in self.policies.values():
            reset = getattr(policy, "reset", None)
            if callable(reset):
                reset(int(self._policy_seeds.integers(2**63)))

    def _hand_number(self) -> int:
        return self.match.hand_number if self.match is not None else 1

    def _step(self, action: int) -> None:
        """Take ``action`` for the seat to act; log it; handle the end of a hand."""
        game = self.game
        seat = game.current_seat
        entry = {"hand": self._hand_number(), "turn": game.turn + 1, "seat": seat,
                 "who": "you" if seat == self.human else f"seat {seat} ({self.names[seat]})",
                 "words": move_words(game, action, you=seat == self.human) if action in game.legal_actions() else ""}
        (self.match or game).step(action)
        self._log(entry)
        if game.is_over:
            self._hand_finished(game)

    def _hand_finished(self, game: Game) -> None:
        self.finished_hands.append(finished_hand(game))
        if self.match is None or self.match.is_over:
            self._end("finished")
        else:
            self._shown = game
            self.status = HAND_OVER

    def _end(self, why: str) -> None:
        self.status = OVER
        self.ending = why

    # ------------------------------------------------------------------ what the client may do
    def act(self, body: dict) -> None:
        """The person's move: ``{"action": id}`` or ``{"move": {...}}`` (see :mod:`skipbo_web.table`)."""
        self._check_playing()
        game = self.game
        if game.current_seat != self.human:
            raise Refused(409, f"it is seat {game.current_seat}'s turn, not yours: POST advance to let it move")
        action = _action_of(body)
        self._note_turn(game)
        before_hand = game.hand_sizes[self.human]
        try:
            self._step(action)
        except IllegalActionError as error:
            raise Refused(422, str(error)) from None
        self._note_reveal(game, action, before_hand)

    def advance(self) -> None:
        """One opponent move (the client calls this once per move it shows)."""
        self._check_playing()
        game = self.game
        seat = game.current_seat
        if seat == self.human:
            raise Refused(409, "it is your turn: act, or undo")
        try:
            action = int(self.policies[seat].act(observe(game, seat)))
            self._step(action)
        except IllegalActionError as error:
            self._end(f"seat {seat} ({self.names[seat]}) broke the rules: {error}")
        except Exception as error:  # a model that fails mid-game ends the game, it does not crash the server
            self._end(f"seat {seat} ({self.names[seat]}) failed: {type(error).__name__}: {error}")

    def undo(self) -> None:
        """Take back the person's last play of this turn (module docstring says how far)."""
        self._check_playing()
        game = self.game
        self._note_turn(game)
        record = game.record()
        if game.current_seat != self.human or len(record["actions"]) <= self._undo_floor:
            raise Refused(409, f"nothing to undo: {self._undo_refusal}")
        taken_back = record["actions"].pop()
        previous = Game.replay(record)
        if self.match is not None:
            self.match.game = previous
        else:
            self._single = previous
        self._log({"hand": self._hand_number(), "turn": previous.turn + 1, "seat": self.human, "who": "you",
                   "words": f"take back: {move_words(previous, taken_back)}"})

    def _log(self, entry: dict) -> None:
        self.log.append(entry)
        del self.log[:-LOG_LENGTH]

    def go_on(self) -> None:
        """After a hand of a match: deal on to the next hand."""
        if self.status != HAND_OVER:
            raise Refused(409, "there is no finished hand to go on from" if self.status == PLAYING else
                          "the game is over")
        self._shown = None
        self.status = PLAYING
        self._start_hand()

    def quit(self) -> None:
        if not self.is_over:
            self._end("quit")

    def expire(self) -> None:
        if not self.is_over:
            self._end("expired")

    def stop(self) -> None:
        """The server stops: the game ends where it is (and is saved unfinished)."""
        if not self.is_over:
            self._end("server stopped")

    def _check_playing(self) -> None:
        if self.status == HAND_OVER:
            raise Refused(409, "the hand is over: POST continue to deal the next one")
        if self.status == OVER:
            raise Refused(409, f"the game is over ({self.ending})")

    def _note_turn(self, game: Game) -> None:
        """At the start of each of the person's turns, the undo floor is the turn's first action."""
        key = (self._hand_number(), game.turn)
        if key != self._turn_key:
            self._turn_key = key
            self._undo_floor = len(game.record()["actions"])
            self._undo_refusal = "there is no play of yours to take back this turn"

    def _note_reveal(self, game: Game, action: int, hand_before: int) -> None:
        """Move the undo floor past a play that showed a new card."""
        move = move_of_action(action)
        if move.get("to") != "building" or game.is_over:
            return
        drew = game.hand_sizes[self.human] > hand_before - (1 if move["from"] == "hand" else 0)
        if move["from"] in ("stock", "partner_stock") or drew:
            self._undo_floor = len(game.record()["actions"])
            what = "drew new cards into your hand" if drew else "turned up a new stockpile card"
            self._undo_refusal = f"your last play {what}, so it stays (taking it back would let you peek)"

    # ------------------------------------------------------------------ views and files
    def view(self) -> dict:
        """The state as the person's seat sees it, with the session's status, log and score sheet."""
        game = self._shown if self._shown is not None else self.game
        names = ["you" if seat == self.human else name for seat, name in enumerate(self.names)]
        view = seat_view(game, self.human, names)
        if self.status != PLAYING:
            view["legal"] = []
        view.update({
            "id": self.id,
            "status": self.status,
            "waiting_for": _waiting_for(self, game),
            "ending": self.ending,
            "can_undo": self._can_undo(game),
            "log": self.log[-LOG_LENGTH:],
            "match": self._match_view(),
            "saved_as": self.saved_path.name if self.saved_path else None,
        })
        return view

    def _can_undo(self, game: Game) -> bool:
        return (self.status == PLAYING and game.current_seat == self.human
                and self._turn_key == (self._hand_number(), game.turn)
                and len(game.record()["actions"]) > self._undo_floor)

    def _match_view(self) -> dict | None:
        if self.match is None:
            return None
        rules = self.rules
        teams = [seat for seat in range(rules.num_players) if rules.team_of(seat) == seat]
        return {
            "hand_number": len(self.finished_hands) + (0 if self.status != PLAYING else 1),
            "match_end": rules.match_end,
            "teams": [[s for s in range(rules.num_players) if rules.team_of(s) == team] for team in teams],
            "sheet": [{"hand": n + 1, "outcome": h["outcome"], "winners": h["winners"],
                       "points": [h["points"][team] for team in teams]} for n, h in enumerate(self.finished_hands)],
            "totals": list(self.match.team_totals),
            "is_over": self.match.is_over,
            "winners": list(self.match.winners),
        }

    def saved_data(self) -> dict:
        """What the saved file holds: exactly ``skipbo play``'s format (see the module docstring)."""
        if self.match is None:
            return hand_file(self._single, self.names, self.human)
        current = None if self.match.is_over or self._shown is not None else self.match.game
        return match_file(self.match, self.seed, self.names, self.human, self.finished_hands, current)

    def save(self, folder: Path) -> Path:
        """Write the game into ``folder`` atomically (``skipbo_env.files.write_text_atomically``)."""
        if self.saved_path is None:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            self.saved_path = folder / f"web-{stamp}-seed{self.seed}-{self.id[:6]}.json"
        write_text_atomically(self.saved_path, json_text(self.saved_data()) + "\n")
        return self.saved_path


def _waiting_for(session: GameSession, game: Game) -> str:
    """What happens next: ``you`` (act or undo), ``opponent`` (advance), ``continue`` or ``nothing``."""
    if session.status == HAND_OVER:
        return "continue"
    if session.status == OVER:
        return "nothing"
    return "you" if game.current_seat == session.human else "opponent"


def _action_of(body) -> int:
    if not isinstance(body, dict) or ("action" in body) == ("move" in body):
        raise Refused(400, 'the body must be a JSON object with "action" (an action id) or "move" (a move object)')
    if "move" in body:
        try:
            return action_from_move(body["move"])
        except ValueError as error:
            raise Refused(400, str(error)) from None
    action = body["action"]
    if isinstance(action, bool) or not isinstance(action, int):
        raise Refused(400, f"action {action!r} is not an action id: use an integer from 0 to 144")
    return action


# ---------------------------------------------------------------------- the store
class SessionStore:
    """The games in play, by id; expiry and the cap as in the module docstring.

    ``clock`` (seconds, monotonic) is a parameter so tests can move time on.
    """

    def __init__(self, games_dir: Path, max_games: int = 64, finished_ttl: float = 600.0,
                 idle_ttl: float = 3600.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.games_dir = games_dir
        self.max_games = max_games
        self.finished_ttl = finished_ttl
        self.idle_ttl = idle_ttl
        self.clock = clock
        self._sessions: dict[str, GameSession] = {}
        self._last_used: dict[str, float] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def create(self, make: Callable[[str], GameSession]) -> GameSession:
        """A new session from ``make(id)``; refused with 503 when ``max_games`` are in play."""
        self.sweep()
        with self._lock:
            if len(self._sessions) >= self.max_games:
                self._evict_one_finished()
            if len(self._sessions) >= self.max_games:
                raise Refused(503, f"the server holds {self.max_games} games already (its limit): finish or quit "
                                   "one, or try again when an idle one expires")
            session_id = secrets.token_urlsafe(12)
            self._sessions[session_id] = None  # reserved while the session is built
            self._last_used[session_id] = self.clock()
        try:
            session = make(session_id)
        except BaseException:
            self._drop(session_id)
            raise
        with self._lock:
            self._sessions[session_id] = session
        return session

    def get(self, session_id: str) -> GameSession:
        self.sweep()
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                raise Refused(404, f"no game {excerpt(session_id)} in play here (it ended and expired, or never existed): "
                                   "start a new one with POST /api/games")
            self._last_used[session_id] = self.clock()
        return session

    def save_if_over(self, session: GameSession) -> None:
        """Save a game once, when it has ended (finished, left, or stopped by a failing policy)."""
        if session.is_over and session.saved_path is None:
            session.save(self.games_dir)

    def sweep(self) -> None:
        """Drop expired sessions, saving an unfinished one as left."""
        now = self.clock()
        with self._lock:
            expired = [session for sid, session in self._sessions.items() if session is not None and (
                now - self._last_used[sid] > self.idle_ttl
                or (session.is_over and now - self._last_used[sid] > self.finished_ttl))]
            for session in expired:
                del self._sessions[session.id]
                del self._last_used[session.id]
        for session in expired:
            with session.lock:
                if not session.is_over:
                    session.expire()
                    session.save(self.games_dir)

    def save_unfinished(self) -> list[Path]:
        """Save every game still in play, ended as "server stopped" (the server calls this as it stops); a
        game that cannot be written is one line in the log, and the others are saved all the same."""
        with self._lock:
            sessions = [session for session in self._sessions.values() if session is not None]
        saved = []
        for session in sessions:
            with session.lock:
                if session.is_over and session.saved_path is not None:
                    continue
                session.stop()
                try:
                    saved.append(session.save(self.games_dir))
                except OSError as error:
                    LOG.error("skipbo serve: game %s not saved in %s: %s", session.id, self.games_dir,
                              error.strerror or error)
        return saved

    def _evict_one_finished(self) -> None:
        """Make room by dropping the longest-unused finished game (it is saved already)."""
        finished = [sid for sid, session in self._sessions.items() if session is not None and session.is_over]
        if finished:
            oldest = min(finished, key=self._last_used.__getitem__)
            del self._sessions[oldest]
            del self._last_used[oldest]

    def _drop(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)
            self._last_used.pop(session_id, None)
