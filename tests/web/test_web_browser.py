"""The web page in a real browser: headless Chromium drives ``skipbo serve`` on a free local port.

The first test plays a short hand (stockpiles of 3) against greedy by clicking cards and piles, sees an
illegal move refused with the engine's reason, takes a play back, finishes (or quits), downloads
the record and opens the replay. Others check that the page keeps to its Content-Security-Policy
and that a page from another origin (a second server on another port) cannot create a game. They
are skipped only when no Chromium is installed (CI installs Debian's).
``SKIPBO_WEB_SCREENSHOTS=docs python -m pytest tests/web/test_web_browser.py`` also writes the
README's pictures, ``docs/web-play.png`` and ``docs/web-replay.png``.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import threading
import urllib.request
from pathlib import Path

import pytest

from tests.web.servers import post_json, running_server

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
pytest.importorskip("uvicorn", reason="the web extra is not installed (pip install -e '.[web]')")

CHROMIUM = next((path for path in ("/usr/bin/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or "")
                 if path and os.path.exists(path)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)")
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"]
SEED = 11


@pytest.fixture()
def server(tmp_path):
    """``skipbo serve`` on a free port of 127.0.0.1, stopped when the test ends."""
    with running_server(tmp_path / "games") as (base, _):
        yield base, tmp_path / "games"


@pytest.fixture()
def browser():
    with playwright_api.sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def _state(page, base: str) -> dict:
    game_id = page.evaluate("sessionStorage.getItem('skipbo-game')")
    with urllib.request.urlopen(f"{base}/api/games/{game_id}") as answer:
        return json.load(answer)


def _wait_until_settled(page) -> str:
    """Wait until the opponents have moved; the page's ``data-waiting``: "you" or "nothing" (or "continue")."""
    page.wait_for_function("() => ['you', 'nothing', 'continue'].includes(document.body.dataset.waiting)", timeout=30000)
    return page.evaluate("document.body.dataset.waiting")


def _click_source(page, move: dict) -> None:
    you = page.locator(".seat.you")
    if move["from"] == "hand":
        you.locator(f".hand .card[data-value='{move['value']}']").first.click()
    elif move["from"] == "stock":
        you.locator(".card.stock").click()
    elif move["from"] == "discard":
        you.locator(f"[data-discard='{move['pile_from']}'] .card").last.click()
    else:
        pytest.fail(f"a singles game has no move from {move['from']}")


def _click_move(page, move: dict) -> None:
    """A move as a person makes it: the card, then the pile."""
    if move.get("end_turn"):
        page.click("#end-turn")
        return
    _click_source(page, move)
    _screenshot(page, "web-play.png")  # the last one kept: late in the hand, a card chosen
    if move["to"] == "building":
        page.click(f"[data-building='{move['pile']}']")
    else:
        page.locator(f".seat.you [data-discard='{move['pile']}']").click()


def _preferred(legal: list[dict]) -> dict:
    """A simple person: a stockpile play, else any building play, else the first discard."""
    for wanted in ("stock", "discard", "hand"):
        for entry in legal:
            if entry["move"].get("from") == wanted and entry["move"].get("to") == "building":
                return entry
    return legal[0]


def _screenshot(page, name: str) -> None:
    folder = os.environ.get("SKIPBO_WEB_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / name), full_page=True)


def _refuse_an_illegal_move(page, state: dict) -> None:
    """A hand number card on a pile that needs another value is refused with the engine's reason."""
    value, pile = next((value, index) for value in state["seats"][state["viewer"]]["hand"] if value != 13
                       for index, building in enumerate(state["building"]) if building["needs"] != value)
    page.locator(f".seat.you .hand .card[data-value='{value}']").first.click()
    page.click(f"[data-building='{pile}']")
    message = page.locator("#message.refused")
    message.wait_for()
    assert "is not legal" in message.inner_text() and f"needs a {state['building'][pile]['needs']}" in message.inner_text()


def test_a_person_plays_a_hand_by_clicking_and_watches_the_replay(server, browser):
    base, games = server
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{base}/#play")
    page.wait_for_selector("#num-players option", state="attached")
    assert page.locator("[data-setting='max_turn_plays']").count() == 1  # settings come from Rules
    page.fill("[data-setting='stock_size'] input", "3")
    page.fill("#seed", str(SEED))
    page.evaluate("const s = document.getElementById('speed'); s.value = 0; s.dispatchEvent(new Event('input'))")
    page.click("#start")
    page.wait_for_selector("#game:not([hidden])")

    waiting = _wait_until_settled(page)
    state = _state(page, base)
    assert all(seat["hand"] is None for seat in state["seats"] if seat["seat"] != state["viewer"])
    _refuse_an_illegal_move(page, state)
    assert _state(page, base)["log"] == state["log"]  # the refused move changed nothing

    undone = False
    for _ in range(400):
        if waiting != "you":
            break
        state = _state(page, base)
        choice = _preferred(state["legal"])
        if choice["move"].get("from") == "hand" and choice["move"].get("to") == "building" and not undone \
                and state["seats"][state["viewer"]]["hand_size"] > 1:
            _click_move(page, choice["move"])
            page.wait_for_function("() => !document.getElementById('undo').disabled")
            page.click("#undo")
            page.wait_for_selector("#log li:last-child:has-text('take back')")
            undone = True
            waiting = _wait_until_settled(page)
            continue
        _click_move(page, choice["move"])
        page.wait_for_function(f"() => document.querySelectorAll('#log li').length > {len(state['log'])} || "
                               "document.body.dataset.waiting !== 'you'")
        waiting = _wait_until_settled(page)
    if waiting == "you":
        page.click("#quit")
    page.wait_for_selector("#download-game")
    assert undone
    assert errors == []

    final = _state(page, base)
    assert final["status"] == "over" and final["saved_as"]
    saved = json.loads((games / final["saved_as"]).read_text())
    assert saved["format"] == "skipbo-record/1" and saved["agents"] == ["human", "greedy"]
    download = page.locator("#download-game").get_attribute("href")
    with urllib.request.urlopen(base + download) as answer:
        assert json.load(answer)["actions"] == saved["actions"]

    page.click("#watch-replay")
    page.wait_for_selector("#replay-body:not([hidden])")
    assert page.inner_text("#replay-total") == str(len(saved["actions"]))
    page.click("#replay-forward")
    page.click("#replay-forward")
    page.wait_for_function("() => document.getElementById('replay-now').textContent.startsWith('Move 2:')")
    page.locator("#replay-moves li").nth(4).click()
    page.wait_for_function("() => document.getElementById('replay-now').textContent.startsWith('Move 5:')")
    page.click("#replay-back")
    page.wait_for_function("() => document.getElementById('replay-now').textContent.startsWith('Move 4:')")
    assert page.locator("#replay-table [data-hand='1'] .card.back").count() == 0
    page.locator("#replay-hands input[data-seat='1']").uncheck()
    assert page.locator("#replay-table [data-hand='1'] .card.back").count() > 0  # seat 1's hand hidden
    _screenshot(page, "web-replay.png")
    assert errors == []


def test_the_page_fits_a_narrow_screen(server, browser):
    base, _ = server
    page = browser.new_page(viewport={"width": 380, "height": 800})
    page.goto(f"{base}/#play")
    page.wait_for_selector("#num-players option", state="attached")
    page.fill("#seed", str(SEED))
    page.click("#start")
    page.wait_for_selector(".seat.you")
    _wait_until_settled(page)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 380, f"the page is {width}px wide on a 380px screen"


# ---------------------------------------------------------------------- another origin
ATTACK_PAGE = """<!DOCTYPE html><html><body>
<form id="form" method="POST" action="{base}/api/games" enctype="text/plain">
<input name='{{"rules": {{"stock_size": 3}}, "x": "' value='"}}'></form>
<script>
window.results = [];
(async () => {{
  for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {{
    try {{
      await fetch("{base}/api/games", {{method: "POST", mode: "no-cors", headers: {{"Content-Type": type}},
                                       body: JSON.stringify({{rules: {{stock_size: 3}}}})}});
      window.results.push("sent " + type);
    }} catch (error) {{ window.results.push("failed " + type); }}
  }}
  try {{
    const answer = await fetch("{base}/api/games", {{method: "POST", headers: {{"Content-Type": "application/json"}},
                                                     body: "{{}}"}});
    window.results.push("json answered " + answer.status);
  }} catch (error) {{ window.results.push("json blocked"); }}
  window.done = true;
}})();
</script></body></html>"""


@pytest.fixture()
def one_game_server(tmp_path):
    """``skipbo serve --max-games 1``: a game created by anyone takes the only place (the next POST gets 503)."""
    with running_server(tmp_path / "games", "--max-games", "1") as (base, _):
        yield base


@pytest.fixture()
def other_origin(one_game_server):
    """A page on another port of 127.0.0.1 (another origin) that tries to create games on the server."""
    page = ATTACK_PAGE.format(base=one_game_server).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args):
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler) as attacker:
        thread = threading.Thread(target=attacker.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{attacker.server_address[1]}/"
        finally:
            attacker.shutdown()
            thread.join()


def test_a_page_from_another_origin_cannot_create_a_game(one_game_server, other_origin, browser):
    page = browser.new_page()
    page.goto(other_origin)
    page.wait_for_function("() => window.done === true", timeout=30000)
    results = page.evaluate("window.results")
    # the simple requests go out; their answers are opaque, or blocked (Cross-Origin-Resource-Policy)
    assert [result.split(" ", 1)[1] for result in results[:3]] == ["text/plain", "application/x-www-form-urlencoded",
                                                                   "multipart/form-data"]
    assert results[3] == "json blocked"  # the preflight finds no CORS permission
    with page.expect_navigation():
        page.evaluate("document.getElementById('form').submit()")
    assert "may not change anything here" in page.content()  # the form POST was answered 403
    status, answer = post_json(f"{one_game_server}/api/games", {"rules": {"stock_size": 3}})
    assert status == 201, answer  # the only place was still free: none of the page's requests made a game


def test_the_page_breaks_no_rule_of_its_content_security_policy_and_sends_a_64_bit_seed_exactly(server, browser):
    base, _ = server
    page = browser.new_page()
    page.add_init_script("window.violations = []; document.addEventListener('securitypolicyviolation', "
                         "(event) => window.violations.push(event.violatedDirective + ' ' + event.blockedURI));")
    page.goto(f"{base}/#play")
    page.wait_for_selector("#num-players option", state="attached")
    page.fill("#seed", str(2**64 - 1))  # the largest seed, past what a JavaScript number holds exactly
    page.click("#start")
    page.wait_for_selector(".seat.you")
    _wait_until_settled(page)
    page.click("#quit")
    page.wait_for_selector("#download-game")
    with urllib.request.urlopen(base + page.locator("#download-game").get_attribute("href")) as answer:
        assert json.load(answer)["seed"] == 2**64 - 1
    page.goto(f"{base}/#watch")
    page.wait_for_selector("#replay-file option:nth-child(2)", state="attached")
    assert page.evaluate("window.violations") == []
