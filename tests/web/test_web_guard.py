"""``skipbo serve`` against a hostile page or client (Starlette's TestClient, no network): seeds, origins,
Host, security headers, body limits, malformed requests, hostile replay files, saving on shutdown."""

from __future__ import annotations

import json
import logging
import os
import time
import warnings
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed (pip install -e '.[web]')")
pytest.importorskip("httpx", reason="httpx is needed by Starlette's TestClient")
with warnings.catch_warnings():  # Starlette asks for httpx2; httpx is what its TestClient runs on today
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

import skipbo_web.app  # noqa: E402
from skipbo_cli.main import main  # noqa: E402
from skipbo_env import Game, Rules  # noqa: E402
from skipbo_web.app import MAX_BODY_BYTES, create_app  # noqa: E402
from skipbo_web.guard import SECURITY_HEADERS, HostCheck  # noqa: E402
from skipbo_web.replays import MAX_ACTIONS, MAX_HANDS  # noqa: E402

BASE = "http://127.0.0.1:8000"
SHORT = {"stock_size": 3}
NEW_GAME = {"rules": SHORT, "opponents": ["greedy"]}


@pytest.fixture()
def games(tmp_path) -> Path:
    return tmp_path / "games"


@pytest.fixture()
def app(games):
    return create_app(games_dir=games)


@pytest.fixture()
def client(app) -> TestClient:
    return TestClient(app, base_url=BASE)


def _error(answer, status: int) -> str:
    assert answer.status_code == status, (answer.status_code, answer.text)
    assert answer.headers["content-type"].startswith("application/json")
    message = answer.json()["error"]
    assert "\n" not in message and "Traceback" not in message and len(message) < 400, message
    return message


def _record_of(client, state: dict) -> dict:
    client.post(f"/api/games/{state['id']}/quit", json={})
    return client.get(f"/api/games/{state['id']}/record").json()


# ---------------------------------------------------------------------- seeds
def test_unseeded_games_draw_64_bit_seeds_that_the_opening_view_does_not_show(client):
    seeds = []
    for _ in range(6):
        state = client.post("/api/games", json=NEW_GAME).json()
        opening = json.dumps(state)
        seed = _record_of(client, state)["seed"]
        assert str(seed) not in opening and "seed" not in opening
        seeds.append(seed)
    assert len(set(seeds)) == 6 and all(0 <= seed < 2**64 for seed in seeds)
    assert max(seeds) > 2**40  # a draw below 1,000,000 (as before) six times over has odds of 2^-262


def test_every_64_bit_seed_may_be_typed_back_in_and_no_more(client, games):
    state = client.post("/api/games", json={**NEW_GAME, "seed": 2**64 - 1}).json()
    assert _record_of(client, state)["seed"] == 2**64 - 1
    state = client.post("/api/games", json={**NEW_GAME, "seed": "18446744073709551615"}).json()  # as the page sends it
    assert _record_of(client, state)["seed"] == 2**64 - 1
    name = client.get(f"/api/games/{state['id']}").json()["saved_as"]
    hand = client.get("/api/replays/file", params={"file": name}).json()["hands"][0]
    assert hand["seed"] == "18446744073709551615"  # a string: a JavaScript number would round it
    assert "from 0 to 18446744073709551615" in _error(client.post("/api/games", json={**NEW_GAME, "seed": 2**64}), 400)


# ---------------------------------------------------------------------- origins and content types
@pytest.mark.parametrize("headers, words", [
    ({"origin": "http://evil.test"}, "'http://evil.test' may not change anything"),
    ({"origin": "http://127.0.0.1:9999"}, "only http://127.0.0.1:8000 may"),
    ({"origin": "null"}, "'null'"),
    ({"referer": "http://evil.test/page.html"}, "a page at 'http://evil.test'"),
    ({"sec-fetch-site": "cross-site"}, "a cross-site request"),
    ({"sec-fetch-site": "same-site", "origin": "http://127.0.0.1:9999"}, "a same-site request"),
])
def test_a_request_from_another_origin_is_refused_with_403_and_changes_nothing(app, client, headers, words):
    answer = client.post("/api/games", json=NEW_GAME, headers=headers)
    assert words in _error(answer, 403)
    assert len(app.state.store) == 0


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                                          "text/plain; charset=utf-8", None])
def test_a_body_a_page_may_send_without_asking_gets_415(app, client, content_type):
    headers = {"content-type": content_type} if content_type else {}
    answer = client.post("/api/games", content=json.dumps(NEW_GAME), headers=headers)
    assert "Content-Type: application/json" in _error(answer, 415)
    assert len(app.state.store) == 0


def test_the_pages_own_origin_and_plain_programs_are_served(app, client):
    own = {"origin": BASE, "sec-fetch-site": "same-origin", "referer": f"{BASE}/#play"}
    state = client.post("/api/games", json=NEW_GAME, headers=own).json()
    assert client.post(f"/api/games/{state['id']}/quit", json={}, headers=own).status_code == 200
    answer = client.post("/api/games", content=json.dumps(NEW_GAME),
                         headers={"content-type": "application/json; charset=utf-8"})
    assert answer.status_code == 201  # curl or a script: no Origin, no Referer
    assert "Content-Type" in _error(client.post(f"/api/games/{state['id']}/advance"), 415)  # {} is a body too


# ---------------------------------------------------------------------- Host
@pytest.mark.parametrize("host", ["evil.test:8000", "evil.test", "127.0.0.1:9999", "127.0.0.1.evil.test:8000",
                                  "localhost:8000@evil.test", "[::1", "", "127.0.0.1:99999999999999999999"])
def test_a_host_this_server_does_not_serve_gets_400(app, client, host):
    assert "is not an address this server serves" in _error(client.get("/api/options", headers={"host": host}), 400)
    answer = client.post("/api/games", json=NEW_GAME, headers={"host": host})
    assert answer.status_code == 400 and len(app.state.store) == 0


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost:8000", "LOCALHOST:8000", "[::1]:8000"])
def test_the_loopback_names_of_a_loopback_server_are_served(client, host):
    assert client.get("/api/options", headers={"host": host}).status_code == 200


@pytest.mark.parametrize("bind, extra, header, allowed", [
    ("127.0.0.1", (), "127.0.0.1:8000", True),
    ("127.0.0.1", (), "192.168.1.5:8000", False),
    ("127.0.0.1", ("table.lan",), "table.lan:8000", True),
    ("127.0.0.1", ("table.lan",), "table.lan:8001", False),
    ("0.0.0.0", (), "192.168.1.5:8000", True),
    ("0.0.0.0", (), "[fe80::1]:8000", True),
    ("0.0.0.0", (), "rebound.evil.test:8000", False),
    ("0.0.0.0", ("table.lan",), "TABLE.lan:8000", True),
    ("192.168.1.5", (), "192.168.1.5:8000", True),
    ("192.168.1.5", (), "localhost:8000", False),
    ("::1", (), "[::1]:8000", True),
])
def test_the_host_check_serves_the_bound_address_and_the_allow_list(bind, extra, header, allowed):
    assert HostCheck(bind, 8000, extra).allows(header) is allowed


def test_allowed_host_adds_a_name(games):
    client = TestClient(create_app(games_dir=games, allowed_hosts=("table.lan",)), base_url="http://table.lan:8000")
    assert client.post("/api/games", json=NEW_GAME, headers={"origin": "http://table.lan:8000"}).status_code == 201


# ---------------------------------------------------------------------- headers
def test_every_answer_carries_the_security_headers(app, client, monkeypatch):
    state = client.post("/api/games", json=NEW_GAME).json()

    def broken():
        raise RuntimeError("a bug")

    monkeypatch.setattr(skipbo_web.app, "setting_schema", broken)
    answers = [client.get("/"), client.get("/static/app.js"), client.get("/static/style.css"), client.get("/api"),
               client.get(f"/api/games/{state['id']}"), client.get("/nowhere"),
               client.get("/api", headers={"host": "evil.test"}),
               client.post("/api/games", json={}, headers={"origin": "http://evil.test"}),
               client.post("/api/games", content="x"), client.get("/api/options")]
    assert [a.status_code for a in answers] == [200, 200, 200, 200, 200, 404, 400, 403, 415, 500]
    for answer in answers:
        for name, value in SECURITY_HEADERS.items():
            assert answer.headers.get(name) == value, (answer.request.url, name)
    policy = SECURITY_HEADERS["content-security-policy"]
    assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy and "'unsafe-inline'" not in policy


def test_the_page_needs_nothing_the_policy_forbids():
    """The page loads one module script and one style sheet from /static, no inline script or style."""
    page = (Path(skipbo_web.app.STATIC) / "index.html").read_text()
    assert "<script>" not in page and " style=" not in page and "<style" not in page
    assert 'src="/static/app.js"' in page and 'href="/static/style.css"' in page


# ---------------------------------------------------------------------- the unexpected
def test_an_unexpected_exception_is_a_logged_one_line_500_without_a_traceback(client, monkeypatch, caplog):
    def broken():
        raise RuntimeError("something the code did not expect\nsecond line")

    monkeypatch.setattr(skipbo_web.app, "setting_schema", broken)
    with caplog.at_level(logging.ERROR, logger="skipbo_web"):
        message = _error(client.get("/api/options"), 500)
    assert message == "internal error (RuntimeError); the game is unchanged"
    logged = [record.getMessage() for record in caplog.records if record.name == "skipbo_web"]
    assert logged == ["skipbo serve: GET /api/options failed: RuntimeError: "
                      "something the code did not expect second line"]
    assert all(record.exc_info is None for record in caplog.records)


# ---------------------------------------------------------------------- bodies
def test_a_declared_length_above_the_cap_is_refused_before_reading(app, client):
    answer = client.post("/api/games", content=b"{" + b" " * MAX_BODY_BYTES + b"}",
                         headers={"content-type": "application/json"})
    assert "more than the 65,536 a request may send" in _error(answer, 413)
    assert len(app.state.store) == 0


def test_a_streamed_body_is_cut_off_at_the_cap(app, client):
    sent = []

    def chunks():
        for _ in range(1000):  # 64 MB if it were all read
            sent.append(1)
            yield b" " * 65536

    answer = client.post("/api/games", content=chunks(), headers={"content-type": "application/json"})
    assert "larger than the 65,536 bytes" in _error(answer, 413)
    assert len(app.state.store) == 0


@pytest.mark.parametrize("body, words", [
    (b"[" * 30_000 + b"]" * 30_000, "nests"),                      # 60 KB, under the cap
    (b'{"seed": ' + b"9" * 5000 + b"}", "not JSON"),                 # more digits than Python parses
    (b'{"seed": ' + b"9" * 4000 + b"}", "integer of"),               # parses, but no seed is that large
    (b'{"seed": -1}', "seed=-1"),
    (b'{"seed": "7x"}', "seed='7x'"),
    (b'{"seed": "-7"}', "seed='-7'"),
    (b'{"seed": "184467440737095516150"}', "seed='184467440737095516150'"),
    (b'{"seed": "18446744073709551616"}', "seed=18446744073709551616"),
    (b'{"seed": 7.0}', "seed=7.0"),
    (b'{"seed": NaN}', "seed=nan"),
    (b'{"seed": true}', "seed=True"),
    (b'{"seat": 99}', "seat=99"),
    (b'{"seat": [0]}', "seat=[0]"),
    (b'{"seat": null}', "seat=None"),
    (b'{"match": "yes"}', "match='yes'"),
    (b'{"rules": []}', "rules must be an object"),
    (b'{"rules": {"stock_size": "x"}}', "stock_size"),
    (b'{"rules": {"stock_size": 1e308}}', "stock_size"),
    (b'{"rules": {"stock_size": Infinity}}', "stock_size"),
    (b'{"rules": {"stock_size": -1}}', "stock_size"),
    (b'{"rules": {"num_players": 1000000000000000000000}}', "num_players"),
    (b'{"rules": {"house_rule": 1}}', "house_rule"),
    (b'{"rules": {"match_end": {"kind": []}}}', "match_end"),
    (b'{"opponents": "greedy"}', "opponents must be"),
    (b'{"opponents": [[]]}', "opponents must be"),
    (b'{"opponents": ["' + b"x" * 5000 + b'"]}', "unknown opponent"),
    (b'{"opponents": ["../../etc/passwd.zip"]}', "unknown opponent"),
    (b'{"color": 1}', "unknown field"),
    (b'"x"', "JSON object"),
    (b"7", "JSON object"),
    (b"null", "JSON object"),
    (b"\xff\xfe{}", "not JSON"),
    (b'{"a": 1, "a": 2, "' + b"k" * 1000 + b'": 3}', "unknown field"),
])
def test_a_malformed_new_game_gets_400_with_one_line(app, client, body, words):
    answer = client.post("/api/games", content=body, headers={"content-type": "application/json"})
    assert words in _error(answer, 400)
    assert len(app.state.store) == 0


@pytest.mark.parametrize("body", [
    b'{"action": 100000000000000000000000000000}', b'{"action": -1}', b'{"action": 1.5}', b'{"move": "x"}',
    b'{"move": {"from": [], "to": {}}}', b'{"move": {"from": "hand", "value": 1e400, "to": "building", "pile": 0}}',
    b'{"move": {"from": "hand", "value": 7, "to": "building", "pile": "0"}}', b'{"move": null}',
    b'{"move": {"from": "discard", "pile_from": 99999999999999999999, "to": "building", "pile": 0}}',
    b'{"move": {"from": "hand", "value": 7, "to": "building", "pile": 0, "extra": [[[[]]]]}}',
    b"[" * 20_000 + b"]" * 20_000,
])
def test_a_malformed_move_gets_a_4xx_and_changes_nothing(client, body):
    state = client.post("/api/games", json={**NEW_GAME, "seed": 5, "seat": 1}).json()
    while state["waiting_for"] == "opponent":
        state = client.post(f"/api/games/{state['id']}/advance", json={}).json()
    answer = client.post(f"/api/games/{state['id']}/act", content=body, headers={"content-type": "application/json"})
    assert answer.status_code in (400, 422), answer.text
    _error(answer, answer.status_code)
    assert client.get(f"/api/games/{state['id']}").json() == state


@pytest.mark.parametrize("path", [
    "/api/replays/file?file=" + "a" * 300 + ".json",
    "/api/replays/file?file=" + "a/" * 200 + "b.json",
    "/api/replays/file?file=" + "x" * 5000,
    "/api/replays/download?file=" + "a" * 300 + ".json",
    "/api/replays/position?file=game.json&hand=" + "9" * 5000,
    "/api/replays/position?file=game.json&move=" + "9" * 30,
    "/api/replays/position?file=game.json&move=--1",
    "/api/replays/position?file=game.json&move=1e3",
    "/api/replays/position?file=game.json&hand=0",
    "/api/replays/position?file=game.json&move=-1",
    "/api/replays/file?file=",
    "/api/replays/file?file=.json",
    "/api/replays/file?file=sub%2F",
    "/api/games/" + "x" * 5000,
    "/api/games/%00",
])
def test_a_malformed_query_gets_a_4xx_with_one_line(client, games, path):
    games.mkdir()
    game = Game.new(Rules(**SHORT), seed=3)
    game.step(game.legal_actions()[0])
    (games / "game.json").write_text(json.dumps(game.record()))
    answer = client.get(path)
    assert 400 <= answer.status_code < 500, answer.text
    _error(answer, answer.status_code)


# ---------------------------------------------------------------------- hostile replay files
def _record(seed: int = 3, moves: int = 6) -> dict:
    """The record of a hand's first ``moves`` moves (the first legal one each time), or all of them if fewer."""
    game = Game.new(Rules(stock_size=5), seed=seed)
    while not game.is_over and game.actions_taken < moves:
        game.step(game.legal_actions()[0])
    return game.record()


def hostile_files() -> dict[str, bytes]:
    record = _record()
    deep_agents = {**record, "agents": [[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]}
    return {
        "binary.json": bytes(range(256)) * 4,
        "deep.json": b"[" * 100_000 + b"]" * 100_000,
        "deep-under-the-parser.json": json.dumps(deep_agents).encode(),
        "empty-list.json": b"[]",
        "number.json": b"7",
        "list-of-numbers.json": b"[1, 2]",
        "string-action.json": json.dumps({**record, "actions": ["x"]}).encode(),
        "float-action.json": json.dumps({**record, "actions": [1.5]}).encode(),
        "bool-action.json": json.dumps({**record, "actions": [True]}).encode(),
        "actions-not-list.json": json.dumps({**record, "actions": 3}).encode(),
        "huge-action.json": json.dumps({**record, "actions": [10**70]}).encode(),
        "illegal-action.json": json.dumps({**record, "actions": [*record["actions"], 144]}).encode(),
        "no-record.json": json.dumps({"format": "skipbo-match/1", "hands": [{"final_state": {}}]}).encode(),
        "hands-not-list.json": json.dumps({"format": "skipbo-match/1", "hands": 5}).encode(),
        "hand-a-number.json": json.dumps({"format": "skipbo-match/1", "hands": [5]}).encode(),
        "current-a-number.json": json.dumps({"format": "skipbo-match/1", "hands": [], "current": 5}).encode(),
        "empty-match.json": json.dumps({"format": "skipbo-match/1", "hands": []}).encode(),
        "winners-not-list.json": json.dumps({**record, "winners": 1}).encode(),
        "final-state-not-mapping.json": json.dumps({**record, "final_state": [1]}).encode(),
        "match-final-state-a-list.json": json.dumps({"format": "skipbo-match/1", "hands": [
            {"record": record, "final_state": [1]}]}).encode(),
        "bad-dealer.json": json.dumps({**record, "dealer": "x"}).encode(),
        "dealer-out-of-range.json": json.dumps({**record, "dealer": 9}).encode(),
        "bad-rules.json": json.dumps({**record, "rules": {"num_players": 9}}).encode(),
        "rules-a-list.json": json.dumps({**record, "rules": [1]}).encode(),
        "no-rules.json": json.dumps({k: v for k, v in record.items() if k != "rules"}).encode(),
        "text-seed.json": json.dumps({**record, "seed": "x"}).encode(),
        "huge-seed.json": json.dumps(record).replace('"seed": 3', '"seed": ' + "9" * 5000).encode(),
        "wide-seed.json": json.dumps({**record, "seed": 2**300}).encode(),
        "float-seed.json": json.dumps({**record, "seed": 1e300}).encode(),
        "nan-start.json": json.dumps({k: v for k, v in record.items() if k not in ("rules", "dealer")}
                                     | {"start": {"format": "skipbo-state/1", "turn": float("nan")}}).encode(),
        "start-a-string.json": json.dumps({**record, "start": "x"}).encode(),
    }


def test_hostile_replay_files_are_refused_alike_by_skipbo_replay_and_the_web(client, games, capsys):
    """Every file the web refuses with a 4xx, ``skipbo replay`` refuses with exit status 2, and the reverse;
    no request costs more than a second or two of CPU."""
    games.mkdir()
    for name, data in hostile_files().items():
        (games / name).write_bytes(data)
    for name in hostile_files():
        started = time.process_time()
        answer = client.get("/api/replays/file", params={"file": name})
        position = client.get("/api/replays/position", params={"file": name, "move": 1})
        assert time.process_time() - started < 4, name
        assert 400 <= answer.status_code < 500, (name, answer.status_code, answer.text)
        web_message = _error(answer, answer.status_code)
        assert position.status_code < 500, (name, position.text)  # the first move of a record may replay
        code = main(["replay", str(games / name), "--all", "--no-color"])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("skipbo replay: error: "), (name, err)
        assert len(err.strip().splitlines()) == 1, (name, err)
        assert str(games) not in web_message, web_message  # the web names the file as the client did


def test_a_fifo_in_the_games_folder_neither_blocks_the_web_nor_skipbo_replay(client, games, capsys):
    games.mkdir()
    os.mkfifo(games / "pipe.json")
    assert _error(client.get("/api/replays/file", params={"file": "pipe.json"}), 404)
    assert client.get("/api/replays").json()["files"] == []
    assert main(["replay", str(games / "pipe.json")]) == 2
    assert "not a regular file" in capsys.readouterr().err


def test_a_long_list_of_records_is_refused_quickly_and_the_caps_still_take_a_long_one(client, games):
    """The web caps what one request replays (skipbo replay, on the user's own machine, does not)."""
    games.mkdir()
    record = {**_record(moves=40), "agents": ["greedy", "random"], "padding": "x" * 1200}
    (games / "list.json").write_text(json.dumps([record] * 2000))
    assert (games / "list.json").stat().st_size > 2_500_000
    started = time.process_time()
    refusal = _error(client.get("/api/replays/file", params={"file": "list.json"}), 422)
    assert "holds 2,000 hands, more than the 200" in refusal
    assert time.process_time() - started < 2
    (games / "moves.json").write_text(json.dumps({**_record(), "actions": [0] * (MAX_ACTIONS + 1)}))
    refusal = _error(client.get("/api/replays/file", params={"file": "moves.json"}), 422)
    assert "more than the 20,000 replayed at once" in refusal
    (games / "fits.json").write_text(json.dumps([_record(seed, 60) for seed in range(MAX_HANDS)]))
    hands = client.get("/api/replays/file", params={"file": "fits.json"}).json()["hands"]
    assert len(hands) == MAX_HANDS and sum(hand["num_moves"] for hand in hands) > 5000


# ---------------------------------------------------------------------- stopping
def test_games_in_play_are_saved_when_the_server_stops(games):
    with TestClient(create_app(games_dir=games), base_url=BASE) as client:
        hand = client.post("/api/games", json={**NEW_GAME, "seed": 4}).json()
        match = client.post("/api/games", json={**NEW_GAME, "seed": 5, "match": True}).json()
        client.post(f"/api/games/{hand['id']}/advance", json={})
        assert not games.exists() or list(games.iterdir()) == []
    saved = {path.name: json.loads(path.read_text()) for path in games.glob("*.json")}
    assert len(saved) == 2 and not list(games.glob(".*"))
    [single] = [data for name, data in saved.items() if name.endswith(f"-{hand['id'][:6]}.json")]
    [played_match] = [data for name, data in saved.items() if name.endswith(f"-{match['id'][:6]}.json")]
    assert Game.replay(single).to_dict() == single["final_state"] and single["agents"] == ["human", "greedy"]
    assert played_match["format"] == "skipbo-match/1" and played_match["current"]["record"]["seed"] is not None


# ---------------------------------------------------------------------- the command
def test_serve_passes_its_address_to_the_host_check_and_warns_beyond_this_machine(tmp_path, monkeypatch, capsys):
    import uvicorn

    served = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: served.update(app=app, **options))
    flags = ["serve", "--games", str(tmp_path / "games"), "--port", "8123"]
    assert main([*flags, "--host", "0.0.0.0", "--allowed-host", "table.lan"]) == 0
    assert "anyone who can reach this address can play and read every game" in capsys.readouterr().out
    client = TestClient(served["app"], base_url="http://192.168.1.5:8123")
    assert client.get("/api").status_code == 200
    assert client.get("/api", headers={"host": "table.lan:8123"}).status_code == 200
    assert client.get("/api", headers={"host": "rebound.evil.test:8123"}).status_code == 400
    assert main(flags) == 0
    assert "anyone who can reach" not in capsys.readouterr().out
    assert TestClient(served["app"], base_url="http://192.168.1.5:8123").get("/api").status_code == 400


def test_a_games_folder_that_cannot_be_written_is_one_logged_line_when_the_server_stops(tmp_path, caplog):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    with caplog.at_level(logging.ERROR, logger="skipbo_web"):
        with TestClient(create_app(games_dir=blocked), base_url=BASE) as client:
            client.post("/api/games", json=NEW_GAME)
            client.post("/api/games", json=NEW_GAME)
    logged = [record.getMessage() for record in caplog.records if record.name == "skipbo_web"]
    assert len(logged) == 2 and all(f"not saved in {blocked}" in line for line in logged), logged
