"""The web app of ``skipbo serve``: the page, and the JSON API under it.

Every answer is JSON; a refused request gets a 4xx status and ``{"error": "one line saying why"}``.

=======  ==================================  ==========================================================
Method   Path                                What it does
=======  ==================================  ==========================================================
GET      ``/api``                            this table as JSON (an OpenAPI-ish description)
GET      ``/api/options``                    the rule settings (name, kind, default, choices), the bots
                                             and the model names a game may seat
POST     ``/api/games``                      a new game: ``{"rules": {...}, "seat": 0, "opponents":
                                             ["greedy"], "match": false, "seed": 7}`` -> 201 and the
                                             state (seed: 0 to 2**64 - 1, a number or a string of
                                             digits; none: 64 random bits); 400 for bad settings,
                                             503 when the server is full
GET      ``/api/games/{id}``                 the state as the person's seat sees it, with ``legal``:
                                             the legal moves (``id`` and ``words``) when it is their turn
POST     ``/api/games/{id}/act``             the person's move: ``{"move": {"from": "hand", "value": 7,
                                             "to": "building", "pile": 0}}`` or ``{"action": 28}``;
                                             422 with the engine's reason when illegal
POST     ``/api/games/{id}/advance``         one opponent move (``waiting_for == "opponent"``)
POST     ``/api/games/{id}/undo``            take back the person's last play of the turn (409 if none)
POST     ``/api/games/{id}/continue``        after a hand of a match, deal the next one
POST     ``/api/games/{id}/quit``            leave the game; it is saved
GET      ``/api/games/{id}/record``          the saved game file (download), once the game is over
GET      ``/api/replays``                    the saved games in the games folder (names, newest first)
GET      ``/api/replays/file?file=NAME``     a file's hands: labels, seat names, every move in words
GET      ``/api/replays/position?file=NAME   the table after ``move`` moves of hand ``hand`` (from 1),
         &hand=1&move=0``                    every hand open
GET      ``/api/replays/download?file=NAME`` the saved file itself
=======  ==================================  ==========================================================

Status codes: 400 malformed request or settings (or a ``Host`` this server does not serve), 403 a
state-changing request from another origin, 404 unknown game or file, 409 not possible now (not
your turn, the hand or game is over, nothing to undo), 413 a body or file too large, 415 a POST
whose body is not ``Content-Type: application/json`` (send ``{}`` when there is nothing to say),
422 an illegal move or a file that is not a game, 503 too many games in play; a bug is a 500 with
one line, never a traceback (:mod:`skipbo_web.guard`). The state (``GET
/api/games/{id}``) holds only what the person's seat may see: the opponents' hand sizes, not their
cards; each stockpile's top card and size; the draw pile's size. The seed and the record are sent
only once the game is over. See :mod:`skipbo_web.table` for the move shapes and the state fields.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import secrets
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

import skipbo_env.rules as rules_module
from agents import BOTS, load_policy
from agents.loading import PRETRAINED
from evaluation.tournament import check_table_size
from skipbo_env import Rules
from skipbo_env.validation import check_plain_json, excerpt
from skipbo_web.guard import HostCheck, RequestGuard
from skipbo_web.replays import GamesFolder, ReplayError, hand_summary, position_after, shown_name
from skipbo_web.sessions import HUMAN, GameSession, Refused, SessionStore

STATIC = Path(__file__).parent / "static"
MAX_BODY_BYTES = 64 * 1024
MAX_SEED = 2**64 - 1
MODEL_SUFFIXES = (".zip", ".pt")
MATCH_END_KINDS = ("target", "rounds", "single_hand")  # RULES.md, "Scoring and matches"

API_TABLE = [
    ("GET", "/api", "this description"),
    ("GET", "/api/options", "rule settings, bots and models a game may seat"),
    ("POST", "/api/games", "new game {rules, seat, opponents, match, seed} -> 201 state"),
    ("GET", "/api/games/{id}", "state as the person's seat sees it"),
    ("POST", "/api/games/{id}/act", "the person's move {move: {...}} or {action: id}"),
    ("POST", "/api/games/{id}/advance", "one opponent move"),
    ("POST", "/api/games/{id}/undo", "take back the person's last play of the turn"),
    ("POST", "/api/games/{id}/continue", "deal the next hand of a match"),
    ("POST", "/api/games/{id}/quit", "leave the game (it is saved)"),
    ("GET", "/api/games/{id}/record", "the saved game file, once over"),
    ("GET", "/api/replays", "saved game files"),
    ("GET", "/api/replays/file?file=NAME", "a file's hands and moves"),
    ("GET", "/api/replays/position?file=NAME&hand=N&move=K", "open table after K moves of hand N"),
    ("GET", "/api/replays/download?file=NAME", "the saved file"),
]


# ---------------------------------------------------------------------- settings and players
def setting_schema() -> list[dict]:
    """Every field of ``Rules`` as a form field: name, kind, default, and choices or bounds."""
    fields = []
    for field in dataclasses.fields(Rules):
        default = field.default_factory() if field.default is dataclasses.MISSING else field.default
        kind = str(field.type).replace(" ", "")
        entry = {"name": field.name, "default": default}
        choices = getattr(rules_module, f"{field.name.upper()}_MODES", None)
        if field.name == "num_players":
            entry.update(kind="int", min=rules_module.MIN_PLAYERS, max=rules_module.MAX_PLAYERS)
        elif kind in ("int", "int|None"):
            entry.update(kind="int", optional=kind.endswith("None"), min=0)
        elif kind == "bool":
            entry.update(kind="bool")
        elif kind == "str" and choices:
            entry.update(kind="choice", choices=list(choices))
        elif field.name == "match_end":
            entry.update(kind="match_end", choices=list(MATCH_END_KINDS))
        else:
            entry.update(kind="json")
        fields.append(entry)
    return fields


class Players:
    """The opponents a game may seat, by name only: the bots, the shipped models, and ``--models`` files.

    A model is named by its path relative to the models folder; the client never names a path:
    the name is looked up among the files found, and only a file inside the folder is found.
    """

    def __init__(self, models_dir: Path | None) -> None:
        self.models_dir = models_dir

    def models(self) -> dict[str, Path]:
        if self.models_dir is None or not self.models_dir.is_dir():
            return {}
        root = self.models_dir.resolve()
        found = {}
        for path in sorted(root.rglob("*")):
            if path.suffix in MODEL_SUFFIXES and GamesFolder._inside(path, root) and path.is_file():
                found[path.relative_to(root).as_posix()] = path.resolve()
        return found

    def names(self) -> list[dict]:
        return ([{"name": name, "kind": "bot"} for name in playable_bots()]
                + [{"name": name, "kind": "shipped model"} for name in PRETRAINED]
                + [{"name": name, "kind": "model"} for name in self.models()])

    def load(self, name, seed: int, num_players: int):
        """The policy a name means at a table of ``num_players``; 400 for a name that is not offered, a model that
        does not load, or one declared for another table size."""
        if name in playable_bots() or name in PRETRAINED:
            spec = name
        else:
            spec = self.models().get(name) if isinstance(name, str) else None
            if spec is None:
                offered = ", ".join(item["name"] for item in self.names())
                raise Refused(400, f"unknown opponent {excerpt(name)}: use one of {offered}")
            spec = str(spec)
        try:
            policy = load_policy(spec, seed=seed)
            check_table_size([policy], num_players)
        except ValueError as error:  # PolicySpecError, SavedModelError, a model for another table size
            raise Refused(400, f"cannot seat opponent {excerpt(name)}: {error}") from None
        return policy


@functools.cache
def playable_bots() -> tuple[str, ...]:
    """The bots a name alone seats (``neural`` needs a model file: its shipped networks are offered by name)."""
    playable = []
    for name in BOTS:
        try:
            load_policy(name)
        except ValueError:
            continue
        playable.append(name)
    return tuple(playable)


# ---------------------------------------------------------------------- new games
def _checked_int(body: dict, key: str, default, low: int, high: int):
    """``body[key]`` (``default`` when absent): an integer from ``low`` to ``high``, or ``None`` where the
    default is ``None`` (the seed: draw one)."""
    value = body.get(key, default)
    if value is None and default is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise Refused(400, f"{key}={excerpt(value)} is not allowed: use an integer from {low} to {high}")
    return value


def _seed_as_number(body: dict) -> dict:
    """The body with a seed given as a string of decimal digits turned into the integer (a page sends a
    64-bit seed so: JavaScript numbers hold 53 bits exactly)."""
    seed = body.get("seed")
    if isinstance(seed, str) and seed.isascii() and seed.isdigit() and len(seed) <= len(str(MAX_SEED)):
        return {**body, "seed": int(seed)}
    return body


def new_session(body, players: Players, session_id: str) -> GameSession:
    """A session from a new-game request (see the table in the module docstring)."""
    if not isinstance(body, dict):
        raise Refused(400, "the body must be a JSON object: {rules, seat, opponents, match, seed}")
    unknown = sorted(set(body) - {"rules", "seat", "opponents", "match", "seed"})
    if unknown:
        raise Refused(400, f"unknown field(s) {', '.join(map(excerpt, unknown[:5]))}: use rules, seat, opponents, "
                           "match, seed")
    opponents = body.get("opponents", ["greedy"])
    if not isinstance(opponents, list) or not opponents or not all(isinstance(o, str) for o in opponents):
        raise Refused(400, "opponents must be a non-empty list of names from GET /api/options")
    settings = body.get("rules", {})
    if not isinstance(settings, dict):
        raise Refused(400, "rules must be an object of settings (see GET /api/options)")
    settings = {"num_players": 1 + len(opponents) if len(opponents) > 1 else 2, **settings}
    try:
        rules = Rules.from_dict(settings)
    except (ValueError, TypeError) as error:
        raise Refused(400, str(error)) from None
    seat = _checked_int(body, "seat", 0, 0, rules.num_players - 1)
    others = rules.num_players - 1
    if len(opponents) == 1:
        opponents = opponents * others
    if len(opponents) != others:
        raise Refused(400, f"{len(opponents)} opponents for {rules.num_players} players: give {others} "
                           "(one per other seat) or one to fill every other seat")
    match = body.get("match", False)
    if not isinstance(match, bool):
        raise Refused(400, f"match={excerpt(match)} is not allowed: use true (a match) or false (one hand)")
    seed = _checked_int(_seed_as_number(body), "seed", None, 0, MAX_SEED)
    if seed is None:  # 64 random bits: no search over seeds from the cards in view finds the deal
        seed = secrets.randbits(64)
    names = list(opponents)
    names.insert(seat, HUMAN)
    policies = {s: players.load(name, seed + s, rules.num_players) for s, name in enumerate(names) if s != seat}
    return GameSession(session_id, rules, seed, seat, policies, names, match)


# ---------------------------------------------------------------------- the app
def create_app(games_dir: Path | str = "games", models_dir: Path | str | None = None, max_games: int = 64,
               finished_ttl: float = 600.0, idle_ttl: float = 3600.0, clock=None, host: str = "127.0.0.1",
               port: int = 8000, allowed_hosts: tuple[str, ...] = ()) -> Starlette:
    """The Starlette app: the page at ``/``, static files, and the API of the module docstring.

    ``host`` and ``port`` are the address it is served at and ``allowed_hosts`` more names for it:
    the ``Host`` header must name one of them (:class:`skipbo_web.guard.HostCheck`). Every request
    passes :class:`skipbo_web.guard.RequestGuard` first. When the server stops, every game still
    in play is saved in ``games_dir``.
    """
    store_options = {"clock": clock} if clock is not None else {}
    store = SessionStore(Path(games_dir), max_games=max_games, finished_ttl=finished_ttl, idle_ttl=idle_ttl,
                         **store_options)
    players = Players(Path(models_dir) if models_dir is not None else None)
    folder = GamesFolder(Path(games_dir))

    async def read_body(request: Request):
        """The JSON body, read a chunk at a time and refused (413) as soon as it passes the cap."""
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise Refused(413, f"the body is larger than the {MAX_BODY_BYTES:,} bytes a request may send")
            chunks.append(chunk)
        return parsed_body(b"".join(chunks))

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    async def describe(request: Request) -> Response:
        return JSONResponse({"title": "skipbo-lab web API", "version": "1",
                             "endpoints": [{"method": m, "path": p, "does": d} for m, p, d in API_TABLE]})

    async def options(request: Request) -> Response:
        return JSONResponse({"settings": setting_schema(), "opponents": players.names()})

    async def create(request: Request) -> Response:
        body = await read_body(request)
        session = await run_in_threadpool(store.create, lambda sid: new_session(body, players, sid))
        return JSONResponse(session.view(), status_code=201)

    def session_action(method: str):
        def work(session: GameSession) -> dict:
            with session.lock:
                getattr(session, method)()
                store.save_if_over(session)
                return session.view()

        async def endpoint(request: Request) -> Response:
            session = store.get(request.path_params["game_id"])
            return JSONResponse(await run_in_threadpool(work, session))
        return endpoint

    def locked_view(session: GameSession) -> dict:
        with session.lock:
            return session.view()

    async def state(request: Request) -> Response:
        session = store.get(request.path_params["game_id"])
        return JSONResponse(await run_in_threadpool(locked_view, session))

    async def act(request: Request) -> Response:
        session = store.get(request.path_params["game_id"])
        body = await read_body(request)

        def work() -> dict:
            with session.lock:
                session.act(body)
                store.save_if_over(session)
                return session.view()
        return JSONResponse(await run_in_threadpool(work))

    async def record(request: Request) -> Response:
        session = store.get(request.path_params["game_id"])
        with session.lock:
            if not session.is_over:
                raise Refused(409, "the record is sent once the game is over (it holds the seed, from which "
                                   "every hidden card follows): finish or quit first")
            data = session.saved_data()
            name = session.saved_path.name if session.saved_path else f"skipbo-{session.id}.json"
        return JSONResponse(data, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    async def replay_list(request: Request) -> Response:
        return JSONResponse({"files": await run_in_threadpool(folder.names)})

    async def replay_file(request: Request) -> Response:
        name = request.query_params.get("file")

        def work() -> dict:
            hands = folder.read(name)
            return {"file": name, "hands": [hand_summary(hand) for hand in hands]}
        return JSONResponse(await run_in_threadpool(work))

    async def replay_position(request: Request) -> Response:
        name = request.query_params.get("file")
        hand_number = _query_int(request, "hand", 1)
        move = _query_int(request, "move", 0)

        def work() -> dict:
            hands = folder.read(name)
            if not 1 <= hand_number <= len(hands):
                raise ReplayError(400, f"hand {hand_number} is not in {shown_name(name)}: use 1 to {len(hands)}")
            return position_after(hands[hand_number - 1], move)
        return JSONResponse(await run_in_threadpool(work))

    async def replay_download(request: Request) -> Response:
        path = folder.path_of(request.query_params.get("file"))
        return FileResponse(path, media_type="application/json", filename=path.name)

    async def refused(request: Request, error: Exception) -> Response:
        status = getattr(error, "status", 400)
        return JSONResponse({"error": str(error)}, status_code=status)

    async def http_error(request: Request, error: HTTPException) -> Response:
        message = error.detail if error.status_code != 404 else f"no such page or endpoint: {request.url.path} (see GET /api)"
        return JSONResponse({"error": message}, status_code=error.status_code)

    game_path = "/api/games/{game_id}"
    routes = [
        Route("/", index),
        Route("/api", describe),
        Route("/api/options", options),
        Route("/api/games", create, methods=["POST"]),
        Route(game_path, state),
        Route(game_path + "/act", act, methods=["POST"]),
        Route(game_path + "/advance", session_action("advance"), methods=["POST"]),
        Route(game_path + "/undo", session_action("undo"), methods=["POST"]),
        Route(game_path + "/continue", session_action("go_on"), methods=["POST"]),
        Route(game_path + "/quit", session_action("quit"), methods=["POST"]),
        Route(game_path + "/record", record),
        Route("/api/replays", replay_list),
        Route("/api/replays/file", replay_file),
        Route("/api/replays/position", replay_position),
        Route("/api/replays/download", replay_download),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        yield
        await run_in_threadpool(store.save_unfinished)

    guard = Middleware(RequestGuard, hosts=HostCheck(host, port, allowed_hosts), max_body_bytes=MAX_BODY_BYTES)
    app = Starlette(routes=routes, middleware=[guard], lifespan=lifespan, exception_handlers={
        Refused: refused, ReplayError: refused, HTTPException: http_error})
    app.state.store = store
    return app


def parsed_body(data: bytes):
    """A request body as plain JSON (``{}`` when empty); 400 naming what is wrong with it."""
    if not data.strip():
        return {}
    try:
        body = json.loads(data)
    except ValueError as error:  # not UTF-8, not JSON, or an integer of over 4,300 digits
        raise Refused(400, f"the body is not JSON ({excerpt(str(error))})") from None
    except RecursionError:
        raise Refused(400, "the body is not JSON a game could use: it nests too deeply") from None
    try:
        check_plain_json(body, "the body")
    except ValueError as error:
        raise Refused(400, str(error)) from None
    return body


def _query_int(request: Request, key: str, default: int) -> int:
    text = request.query_params.get(key)
    if text is None:
        return default
    if not (text.isascii() and text.removeprefix("-").isdigit() and len(text) <= 18):
        raise Refused(400, f"{key}={excerpt(text)} is not an integer (of at most 18 digits)")
    return int(text)
