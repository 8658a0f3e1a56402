"""The JSON API of ``skipbo serve`` (Starlette's TestClient, no network): play, refusals, files, limits."""

from __future__ import annotations

import json
import os
import re
import shutil
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed (pip install -e '.[web]')")
pytest.importorskip("httpx", reason="httpx is needed by Starlette's TestClient")
with warnings.catch_warnings():  # Starlette asks for httpx2; httpx is what its TestClient runs on today
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from skipbo_env import Game  # noqa: E402
from skipbo_env.rules import SETTING_NAMES  # noqa: E402
from skipbo_web.app import create_app  # noqa: E402
from skipbo_cli.main import main  # noqa: E402

SHORT = {"stock_size": 3}
BASE = "http://127.0.0.1:8000"  # the address create_app serves by default (its Host check holds)
PRETRAINED = Path(__file__).resolve().parents[2] / "agents" / "pretrained" / "ppo-2p.zip"


class Clock:
    """A clock the test moves on by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def games(tmp_path) -> Path:
    return tmp_path / "games"


@pytest.fixture()
def client(games) -> TestClient:
    return TestClient(create_app(games_dir=games), base_url=BASE)


def _new(client, **body) -> dict:
    answer = client.post("/api/games", json={"rules": SHORT, "opponents": ["greedy"], **body})
    assert answer.status_code == 201, answer.text
    return answer.json()


def _to_my_turn(client, state: dict) -> dict:
    while state["waiting_for"] == "opponent":
        state = client.post(f"/api/games/{state['id']}/advance", json={}).json()
    return state


def _play_out(client, state: dict, limit: int = 2000) -> dict:
    """Play the person's seat with the first legal move until the game stops for a reason."""
    for _ in range(limit):
        state = _to_my_turn(client, state)
        if state["waiting_for"] != "you":
            return state
        answer = client.post(f"/api/games/{state['id']}/act", json={"action": state["legal"][0]["id"]})
        assert answer.status_code == 200, answer.text
        state = answer.json()
    raise AssertionError("the game did not end")


def _error(answer, status: int) -> str:
    assert answer.status_code == status, (answer.status_code, answer.text)
    assert answer.headers["content-type"].startswith("application/json")
    return answer.json()["error"]


# ---------------------------------------------------------------------- playing
def test_a_whole_hand_against_greedy_is_saved_as_skipbo_play_saves_it(client, games):
    state = _play_out(client, _new(client, seed=5))
    assert state["status"] == "over" and state["ending"] == "finished" and state["outcome"] == "win"
    saved = json.loads((games / state["saved_as"]).read_text())
    assert saved["agents"] == ["human", "greedy"] and saved["human_seat"] == 0
    replayed = Game.replay(saved)
    assert json.loads(json.dumps(replayed.to_dict())) == saved["final_state"]
    assert list(replayed.winners) == state["winners"]
    assert main(["replay", str(games / state["saved_as"]), "--all", "--no-color"]) == 0
    download = client.get(f"/api/games/{state['id']}/record")
    assert download.status_code == 200 and "attachment" in download.headers["content-disposition"]
    assert download.json() == saved


def test_the_state_shows_only_what_the_persons_seat_sees(client):
    state = _new(client, seed=2, rules={**SHORT, "num_players": 3}, opponents=["greedy", "random"])
    text = json.dumps(state)
    for secret in ('"seed"', '"rng"', '"draw_pile"', '"record"', '"stock"', '"actions"'):
        assert secret not in text
    for seat in state["seats"]:
        assert (seat["hand"] is not None) == (seat["seat"] == state["viewer"])
        assert set(seat) >= {"stock_top", "stock_size", "hand_size", "discards"}
    assert _error(client.get(f"/api/games/{state['id']}/record"), 409).startswith("the record is sent once")


def test_an_illegal_move_is_refused_with_the_engines_reason_and_changes_nothing(client):
    state = _to_my_turn(client, _new(client, seed=5))
    hand = state["seats"][0]["hand"]
    value = next(v for v in hand if v not in (1, 13))
    move = {"from": "hand", "value": value, "to": "building", "pile": 0}
    reason = _error(client.post(f"/api/games/{state['id']}/act", json={"move": move}), 422)
    assert reason.endswith(f"building pile 1 needs a 1 (or SKIP-BO), not a {value}")
    assert client.get(f"/api/games/{state['id']}").json() == state


@pytest.mark.parametrize("body, words", [
    (b"{not json", "not JSON"),
    (b"[1, 2]", "JSON object"),
    (b'{"action": "7"}', "not an action id"),
    (b'{"action": 7, "move": {}}', '"action"'),
    (b'{"move": {"from": "deck", "to": "building", "pile": 0}}', "'from'"),
    (b'{"move": {"from": "hand", "value": 3, "to": "building", "pile": 9}}', "'pile'"),
    (b'{"move": {"from": "stock", "to": "discard", "pile": 0}}', "only a hand card"),
])
def test_a_malformed_move_gets_400_with_a_message(client, body, words):
    state = _to_my_turn(client, _new(client, seed=5))
    answer = client.post(f"/api/games/{state['id']}/act", content=body, headers={"content-type": "application/json"})
    assert words in _error(answer, 400)


def test_an_action_id_outside_the_range_is_refused_by_the_engine(client):
    state = _to_my_turn(client, _new(client, seed=5))
    assert "not an action id" in _error(client.post(f"/api/games/{state['id']}/act", json={"action": 999}), 422)


@pytest.mark.parametrize("body, words", [
    ({"opponents": ["/etc/passwd"]}, "unknown opponent"),
    ({"opponents": ["agents.greedy:GreedyBot"]}, "unknown opponent"),
    ({"opponents": ["../agents/pretrained/ppo-2p.zip"]}, "unknown opponent"),
    ({"opponents": []}, "non-empty list"),
    ({"rules": {"num_players": 9}}, "num_players=9"),
    ({"rules": {"stock_size": 0}}, "stock_size=0"),
    ({"rules": {"colour": "red"}}, "unknown setting(s) 'colour'"),
    ({"rules": "fast"}, "rules must be an object"),
    ({"seat": 2}, "seat=2"),
    ({"match": "yes"}, "match='yes'"),
    ({"seed": -1}, "seed=-1"),
    ({"rules": {"num_players": 4}, "opponents": ["greedy", "random"]}, "2 opponents for 4 players"),
    ({"colour": "red"}, "unknown field(s) 'colour'"),
])
def test_a_bad_new_game_gets_400_with_a_message(client, body, words):
    assert words in _error(client.post("/api/games", json={"rules": SHORT, "opponents": ["greedy"], **body}), 400)


def test_an_unknown_game_or_endpoint_gets_404_json(client):
    for path in ("/api/games/nope", "/api/games/nope/record", "/api/nothing"):
        _error(client.get(path), 404)
    _error(client.post("/api/games/nope/act", json={"action": 1}), 404)


def test_moves_out_of_turn_are_409(client):
    state = _to_my_turn(client, _new(client, seed=5))
    assert "your turn" in _error(client.post(f"/api/games/{state['id']}/advance", json={}), 409)
    discard = next(m for m in state["legal"] if m["move"].get("to") == "discard")
    state = client.post(f"/api/games/{state['id']}/act", json={"move": discard["move"]}).json()
    assert state["waiting_for"] == "opponent"
    assert "not yours" in _error(client.post(f"/api/games/{state['id']}/act", json={"action": 0}), 409)


def test_undo_takes_back_a_hand_play_but_never_a_stockpile_play(client):
    for seed in range(40):
        state = _to_my_turn(client, _new(client, seed=seed))
        hand_play = next((m for m in state["legal"] if m["move"].get("from") == "hand"
                          and m["move"].get("to") == "building"), None)
        if hand_play and len(state["seats"][0]["hand"]) > 1:
            break
    game = state["id"]
    assert "no play of yours" in _error(client.post(f"/api/games/{game}/undo", json={}), 409)
    after = client.post(f"/api/games/{game}/act", json={"action": hand_play["id"]}).json()
    assert after["can_undo"] and len(after["seats"][0]["hand"]) == len(state["seats"][0]["hand"]) - 1
    back = client.post(f"/api/games/{game}/undo", json={}).json()
    assert back["seats"][0]["hand"] == state["seats"][0]["hand"] and back["building"] == state["building"]
    assert back["legal"] == state["legal"] and not back["can_undo"]
    for seed in range(60):
        state = _to_my_turn(client, _new(client, seed=seed))
        stock_play = next((m for m in state["legal"] if m["move"].get("from") == "stock"), None)
        if stock_play:
            break
    after = client.post(f"/api/games/{state['id']}/act", json={"action": stock_play["id"]}).json()
    assert after["waiting_for"] == "you" and not after["can_undo"]
    assert "turned up a new stockpile card" in _error(client.post(f"/api/games/{state['id']}/undo", json={}), 409)


def test_a_match_shows_the_score_sheet_and_waits_between_hands(client, games):
    state = _new(client, seed=3, match=True, rules={"stock_size": 2, "match_end": {"rounds": 2}})
    state = _play_out(client, state)
    assert state["status"] == "hand_over" and state["waiting_for"] == "continue"
    assert len(state["match"]["sheet"]) == 1 and state["outcome"] is not None
    assert "POST continue" in _error(client.post(f"/api/games/{state['id']}/act", json={"action": 0}), 409)
    state = client.post(f"/api/games/{state['id']}/continue", json={}).json()
    assert state["status"] == "playing" and state["turn"] == 1
    state = _play_out(client, state)
    assert state["status"] == "over" and state["match"]["is_over"] and len(state["match"]["sheet"]) == 2
    assert sum(row["points"][team] for row in state["match"]["sheet"] for team in range(2)) == \
        sum(state["match"]["totals"])
    saved = json.loads((games / state["saved_as"]).read_text())
    assert saved["format"] == "skipbo-match/1" and len(saved["hands"]) == 2
    assert main(["replay", str(games / state["saved_as"]), "--all", "--no-color"]) == 0


def test_quitting_saves_the_unfinished_game(client, games):
    state = _to_my_turn(client, _new(client, seed=5))
    state = client.post(f"/api/games/{state['id']}/quit", json={}).json()
    assert state["status"] == "over" and state["ending"] == "quit"
    saved = json.loads((games / state["saved_as"]).read_text())
    assert "outcome" not in saved["final_state"]
    assert "game is over" in _error(client.post(f"/api/games/{state['id']}/act", json={"action": 0}), 409)


# ---------------------------------------------------------------------- options and models
def test_the_options_offer_every_rule_setting_and_the_bots(client):
    options = client.get("/api/options").json()
    assert [s["name"] for s in options["settings"]] == list(SETTING_NAMES)
    assert {"random", "greedy", "planner", "pretrained-2p"} <= {o["name"] for o in options["opponents"]}
    assert client.get("/api/options").json() == options
    assert {e["path"] for e in client.get("/api").json()["endpoints"]} >= {"/api/games", "/api/games/{id}/act"}


def test_every_opponent_offered_seats_a_game_and_docs_web_lists_them_all(client):
    offered = [o["name"] for o in client.get("/api/options").json()["opponents"]]
    for name in offered:
        assert client.post("/api/games", json={"opponents": [name], "seed": 1}).status_code == 201, name
    assert "neural" not in offered  # it needs a model file; its shipped network is offered by name
    assert "unknown opponent" in _error(client.post("/api/games", json={"opponents": ["neural"]}), 400)
    page = (Path(__file__).resolve().parents[2] / "docs" / "web.md").read_text()
    listed = page[page.index("opponents: the bots"):page.index("and the model files")]
    assert re.findall(r"`([^`]+)`", listed) == offered


def test_a_model_for_two_players_is_refused_at_a_larger_table(client):
    answer = client.post("/api/games", json={"opponents": ["neural-2p", "greedy"], "seed": 1})
    assert "was trained for 2 players" in _error(answer, 400)


def test_models_are_offered_by_name_and_only_from_inside_the_models_folder(tmp_path, games):
    models = tmp_path / "models"
    (models / "runs").mkdir(parents=True)
    shutil.copy(PRETRAINED, models / "runs" / "mine.zip")
    outside = tmp_path / "outside.zip"
    shutil.copy(PRETRAINED, outside)
    os.symlink(outside, models / "escape.zip")
    client = TestClient(create_app(games_dir=games, models_dir=models), base_url=BASE)
    offered = {o["name"]: o["kind"] for o in client.get("/api/options").json()["opponents"]}
    assert offered.get("runs/mine.zip") == "model" and "escape.zip" not in offered
    state = _new(client, seed=1, opponents=["runs/mine.zip"])
    assert state["seats"][1]["name"] == "runs/mine.zip"
    assert _to_my_turn(client, state)["waiting_for"] in ("you", "nothing")
    assert "unknown opponent" in _error(client.post("/api/games", json={"opponents": ["escape.zip"]}), 400)
    assert "unknown opponent" in _error(client.post("/api/games", json={"opponents": [str(outside)]}), 400)


# ---------------------------------------------------------------------- replays
@pytest.fixture()
def saved_game(client, games) -> str:
    return _play_out(client, _new(client, seed=5))["saved_as"]


def test_the_replay_view_steps_through_a_saved_game(client, saved_game, games):
    assert [f["name"] for f in client.get("/api/replays").json()["files"]] == [saved_game]
    hand = client.get("/api/replays/file", params={"file": saved_game}).json()["hands"][0]
    record = json.loads((games / saved_game).read_text())
    assert hand["num_moves"] == len(record["actions"]) and hand["matches_saved"] is True
    start = client.get("/api/replays/position", params={"file": saved_game, "move": 0}).json()
    end = client.get("/api/replays/position", params={"file": saved_game, "move": hand["num_moves"]}).json()
    assert all(seat["hand"] is not None for seat in start["seats"])
    assert end["outcome"] == "win" and start["outcome"] is None
    assert "move 999" in _error(client.get("/api/replays/position", params={"file": saved_game, "move": 999}), 400)
    assert client.get("/api/replays/download", params={"file": saved_game}).json() == record


def test_the_replay_view_reads_evaluate_records_in_subfolders(client, games):
    game = Game.new(seed=4)
    while not game.is_over and len(game.record()["actions"]) < 30:
        game.step(game.legal_actions()[0])
    (games / "eval").mkdir(parents=True)
    (games / "eval" / "game-000001.json").write_text(json.dumps({**game.record(), "agents": ["random", "greedy"]}))
    hand = client.get("/api/replays/file", params={"file": "eval/game-000001.json"}).json()["hands"][0]
    assert hand["names"] == ["random", "greedy"] and hand["num_moves"] == 30


@pytest.mark.parametrize("name", ["../secret.json", "/etc/passwd", "sub/../../secret.json", "..\\secret.json",
                                  "", "a\x00.json"])
def test_the_replay_view_refuses_names_outside_the_games_folder(client, games, tmp_path, name):
    (tmp_path / "secret.json").write_text("{}")
    games.mkdir(exist_ok=True)
    for path in ("/api/replays/file", "/api/replays/position", "/api/replays/download"):
        assert _error(client.get(path, params={"file": name}), 400)


def test_encoded_traversal_and_symlinks_out_are_refused(client, games, tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(Game.new(seed=1).record()))
    games.mkdir()
    os.symlink(secret, games / "link.json")
    os.symlink(tmp_path, games / "up")
    assert client.get("/api/replays").json()["files"] == []
    for raw in ("file=%2e%2e%2fsecret.json", "file=..%2Fsecret.json", "file=%2Fetc%2Fpasswd",
                "file=link.json", "file=up%2Fsecret.json", "file=%252e%252e%252fsecret.json"):
        answer = client.get(f"/api/replays/download?{raw}")
        assert answer.status_code in (400, 404), raw
        assert "error" in answer.json()


def test_a_file_that_is_not_a_game_gets_422(client, games):
    games.mkdir()
    (games / "notes.json").write_text('{"hello": 1}')
    (games / "broken.json").write_text("{")
    assert "not a game" in _error(client.get("/api/replays/file", params={"file": "notes.json"}), 422)
    assert "is not JSON" in _error(client.get("/api/replays/file", params={"file": "broken.json"}), 422)
    assert _error(client.get("/api/replays/file", params={"file": "missing.json"}), 404)


# ---------------------------------------------------------------------- limits
def test_the_game_cap_holds_under_load(games):
    client = TestClient(create_app(games_dir=games, max_games=3), base_url=BASE)
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda _: client.post("/api/games", json={"rules": SHORT}), range(12)))
    assert sorted(a.status_code for a in answers) == [201] * 3 + [503] * 9
    assert "holds 3 games already" in answers[[a.status_code for a in answers].index(503)].json()["error"]
    first = next(a.json()["id"] for a in answers if a.status_code == 201)
    client.post(f"/api/games/{first}/quit", json={})
    assert client.post("/api/games", json={"rules": SHORT}).status_code == 201  # a finished game makes room
    assert client.get(f"/api/games/{first}").status_code == 404


def test_idle_and_finished_games_expire(games):
    clock = Clock()
    client = TestClient(create_app(games_dir=games, idle_ttl=100, finished_ttl=10, clock=clock), base_url=BASE)
    idle = _to_my_turn(client, _new(client, seed=5))
    done = _play_out(client, _new(client, seed=5))
    clock.now += 11
    assert _error(client.get(f"/api/games/{done['id']}"), 404)
    assert client.get(f"/api/games/{idle['id']}").status_code == 200
    clock.now += 101
    assert "no game" in _error(client.get(f"/api/games/{idle['id']}"), 404)
    saved = [json.loads(path.read_text()) for path in games.glob("*.json")]
    assert len(saved) == 2 and sum("outcome" not in data["final_state"] for data in saved) == 1


# ---------------------------------------------------------------------- the command
def test_skipbo_serve_listens_on_this_machine_only_by_default_and_refuses_bad_flags_with_exit_status_2(tmp_path, capsys):
    from skipbo_cli.main import build_parser

    args = build_parser("serve").parse_args(["serve"])
    assert (args.host, args.port, args.games, args.models) == ("127.0.0.1", 8000, "games", None)
    assert main(["serve", "--models", str(tmp_path / "nowhere")]) == 2
    assert "--models" in capsys.readouterr().err
    for flags, words in ((["--max-games", "0"], "--max-games 0"),
                         (["--allowed-host", "evil.test:80"], "without a port")):
        assert main(["serve", *flags]) == 2
        err = capsys.readouterr().err
        assert err.startswith("skipbo serve: error: ") and words in err and len(err.splitlines()) == 1
