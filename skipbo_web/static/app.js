// skipbo-lab web page: play the agents (#play) and watch saved games (#watch).
// Plain ES module, no build step. Everything the table shows comes from the server's JSON API
// (see skipbo_web/app.py); the page never works out a rule itself: a move is sent as
// {from, to, pile, ...} and the engine says whether it is legal.

const WILD = 13;
const $ = (id) => document.getElementById(id);

// ------------------------------------------------------------------ the API
// Every POST carries a JSON body ({} when there is nothing to say): the server takes state-changing
// requests only as application/json from this page's own origin.
async function api(method, path, body) {
  const options = { method, headers: {} };
  if (method !== "GET") {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body === undefined ? {} : body);
  }
  const response = await fetch(path, options);
  let data = null;
  try { data = await response.json(); } catch { data = null; }
  if (!response.ok) {
    const error = new Error((data && data.error) || `${response.status} ${response.statusText}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

const cardName = (value) => (value === WILD ? "SKIP-BO" : String(value));

// ------------------------------------------------------------------ cards
function cardEl(value, options = {}) {
  const card = el("div", "card");
  if (options.back) {
    card.classList.add("back");
  } else if (!value) {
    card.classList.add("slot");
    card.append(el("span", "num", options.slotText || ""));
  } else {
    if (value === WILD) card.classList.add("wild");
    else if (value >= 9) card.classList.add("v-high");
    else if (value >= 5) card.classList.add("v-mid");
    card.append(el("span", "num", value === WILD ? "SKIP-BO" : String(value)));
    card.append(el("span", "big", value === WILD ? "★" : String(value)));
    card.dataset.value = String(value);
    card.setAttribute("aria-label", cardName(value));
  }
  if (options.count !== undefined) card.append(el("span", "count", String(options.count)));
  if (options.asValue) card.append(el("span", "as-label", `as ${options.asValue}`));
  return card;
}

function zone(label, ...children) {
  const box = el("div", "zone");
  box.append(...children, el("span", "zone-label", label));
  return box;
}

// ------------------------------------------------------------------ the table
// opts: {viewer, shownHand(seat) -> bool, source (selected), interactive, onSource(src), onTarget(kind, pile)}
function renderTable(container, state, opts) {
  container.replaceChildren();
  const viewer = opts.viewer;
  const others = state.seats.filter((s) => s.seat !== viewer);
  const top = el("div", "row");
  for (const seat of others) top.append(seatPanel(state, seat, opts));
  container.append(top, centerRow(state, opts));
  if (viewer !== null && viewer !== undefined) {
    const you = el("div", "row");
    you.append(seatPanel(state, state.seats[viewer], opts));
    container.append(you);
  }
}

function sourceKey(src) {
  return src ? `${src.from}:${src.value ?? ""}:${src.pile_from ?? ""}:${src.index ?? ""}` : "";
}

function seatPanel(state, seat, opts) {
  const viewer = opts.viewer;
  const isYou = seat.seat === viewer;
  const isPartner = viewer !== null && viewer !== undefined && state.seats[viewer].partner === seat.seat;
  const panel = el("div", "seat" + (isYou ? " you" : ""));
  panel.dataset.seat = String(seat.seat);
  if (state.current_seat === seat.seat) panel.classList.add("to-act");
  const title = el("div", "seat-title");
  title.append(el("span", "", isYou ? `You (seat ${seat.seat})` : `Seat ${seat.seat}: ${seat.name}`));
  if (isPartner) title.append(el("span", "sub", "your partner"));
  if (state.current_seat === seat.seat) title.append(el("span", "badge", "to play"));
  title.append(el("span", "sub", `hand ${seat.hand_size} · stockpile ${seat.stock_size}`));
  panel.append(title);

  const body = el("div", "seat-body");
  const mine = isYou && opts.interactive;
  const fromPartner = isPartner && opts.interactive;
  // stockpile: its top card and how many cards it holds
  const stockCard = seat.stock_top ? cardEl(seat.stock_top, { count: seat.stock_size }) : cardEl(0, { slotText: "empty" });
  stockCard.classList.add("stock");
  if ((mine || fromPartner) && seat.stock_top && !(fromPartner && seat.shares_stock)) {
    const src = { from: mine ? "stock" : "partner_stock" };
    makeSource(stockCard, src, opts);
  }
  body.append(zone(seat.shares_stock ? "team stockpile" : "stockpile", stockCard));

  // discard piles, fanned so every card shows (bottom card first)
  const discards = el("div", "discards");
  seat.discards.forEach((pile, index) => {
    const fan = el("div", "fan target");
    fan.dataset.discard = String(index);
    if (pile.length === 0) fan.append(cardEl(0, { slotText: `${index + 1}` }));
    pile.forEach((value, position) => {
      const card = cardEl(value);
      const isTop = position === pile.length - 1;
      if (isTop && (mine || fromPartner)) {
        makeSource(card, { from: mine ? "discard" : "partner_discard", pile_from: index }, opts);
      }
      fan.append(card);
    });
    if (mine) {
      if (opts.source) fan.classList.add("armed");
      fan.addEventListener("click", (event) => {
        if (event.target.closest(".clickable-card") && !opts.source) return;
        if (opts.source) { event.stopPropagation(); opts.onTarget("discard", index); }
      });
    }
    discards.append(zone(`discard ${index + 1}`, fan));
  });
  body.append(discards);

  // the hand: cards when the viewer may see them, else backs
  const shown = seat.hand && opts.shownHand(seat.seat);
  const hand = el("div", "hand" + (shown ? "" : " backs"));
  hand.dataset.hand = String(seat.seat);
  if (shown) {
    seat.hand.forEach((value, index) => {
      const card = cardEl(value);
      if (mine) makeSource(card, { from: "hand", value, index }, opts);
      hand.append(card);
    });
    if (seat.hand.length === 0) hand.append(el("span", "zone-label", "(empty)"));
  } else {
    for (let i = 0; i < seat.hand_size; i++) hand.append(cardEl(0, { back: true }));
    if (seat.hand_size === 0) hand.append(el("span", "zone-label", "(empty)"));
  }
  body.append(zone(isYou ? "your hand" : "hand", hand));
  panel.append(body);
  return panel;
}

function makeSource(card, src, opts) {
  card.classList.add("clickable-card");
  card.tabIndex = 0;
  card.dataset.source = src.from;
  if (sourceKey(opts.source) === sourceKey(src)) card.classList.add("selected");
  const pick = (event) => {
    event.stopPropagation();
    if (src.from === "discard" && opts.source && opts.source.from === "hand") {
      opts.onTarget("discard", src.pile_from);  // a hand card chosen, then a discard pile: discard onto it
      return;
    }
    opts.onSource(sourceKey(opts.source) === sourceKey(src) ? null : src);
  };
  card.addEventListener("click", pick);
  card.addEventListener("keydown", (event) => { if (event.key === "Enter" || event.key === " ") pick(event); });
}

function centerRow(state, opts) {
  const center = el("div", "center");
  const building = el("div", "building");
  state.building.forEach((pile, index) => {
    const target = el("div", "target building-pile");
    target.dataset.building = String(index);
    const top = pile.top
      ? cardEl(pile.top, { count: pile.size, asValue: pile.top === WILD ? pile.size : null })
      : cardEl(0, { slotText: "empty" });
    target.append(top);
    if (opts.interactive && opts.source) {
      target.classList.add("armed");
      target.addEventListener("click", () => opts.onTarget("building", index));
    }
    const label = el("span", "needs", `pile ${index + 1} · needs ${pile.needs}`);
    const box = el("div", "zone");
    box.append(target, label);
    building.append(box);
  });
  center.append(building);
  center.append(zone("draw pile", cardEl(0, { back: true, count: state.draw_pile_size })));
  const completed = Math.floor(state.completed_size / 12);
  center.append(zone("set aside", el("span", "zone-label", `${completed} completed pile${completed === 1 ? "" : "s"}`)));
  center.append(zone("", el("span", "zone-label", `turn ${state.turn} · dealer seat ${state.dealer}`)));
  return center;
}

function outcomeWords(state, you) {
  if (state.outcome === "win") {
    const winners = state.winners.map((s) => (s === you ? "you" : `seat ${s} (${state.seats[s].name})`));
    const points = state.points[state.winners[0]];
    const text = winners.join(" and ");
    // the same sentences as skipbo_env.explain.outcome_sentence
    return `${text[0].toUpperCase()}${text.slice(1)} won the hand: ${points} points.`;
  }
  if (state.outcome === "draw") return "The hand ended in a draw: nothing was left to play or draw, and nobody scores.";
  if (state.outcome === "truncated") return `The hand was cut off after ${state.turn - 1} turns (max_turns): nobody scores.`;
  return "";
}

// ------------------------------------------------------------------ the speed control
const speed = $("speed");
speed.value = localStorage.getItem("skipbo-speed") ?? speed.value;
const showSpeed = () => { $("speed-value").textContent = `${(speed.value / 1000).toFixed(1)} s`; };
speed.addEventListener("input", () => { localStorage.setItem("skipbo-speed", speed.value); showSpeed(); });
showSpeed();
const delay = () => Number(speed.value);

// ------------------------------------------------------------------ setting up a game
let options = null;

async function loadOptions() {
  if (options) return options;
  options = await api("GET", "/api/options");
  buildSetup();
  return options;
}

function settingLabel(name) {
  return name.replace(/_/g, " ");
}

function buildSetup() {
  const count = $("num-players");
  const table = options.settings.find((s) => s.name === "num_players");
  for (let n = table.min; n <= table.max; n++) count.append(new Option(`${n} players`, String(n)));
  count.value = String(table.default);
  const rules = $("rules");
  rules.replaceChildren();
  for (const setting of options.settings) {
    if (setting.name === "num_players") continue;
    rules.append(settingField(setting));
  }
  count.addEventListener("change", buildSeats);
  buildSeats();
}

// One form field per rule setting, built from the server's description of Rules.
function settingField(setting) {
  const label = el("label", "", settingLabel(setting.name));
  label.dataset.setting = setting.name;
  let input;
  if (setting.kind === "bool") {
    label.classList.add("check");
    input = el("input");
    input.type = "checkbox";
    input.checked = Boolean(setting.default);
    label.prepend(input);
  } else if (setting.kind === "choice") {
    input = el("select");
    for (const choice of setting.choices) input.append(new Option(choice, choice));
    input.value = setting.default;
    label.append(input);
  } else if (setting.kind === "match_end") {
    const [kind, number] = Object.entries(setting.default)[0];
    input = el("select");
    for (const choice of setting.choices) input.append(new Option(choice.replace("_", " "), choice));
    input.value = kind;
    const amount = el("input");
    amount.type = "number";
    amount.min = "1";
    amount.value = typeof number === "number" ? String(number) : "";
    amount.dataset.part = "amount";
    input.addEventListener("change", () => { amount.hidden = input.value === "single_hand"; });
    label.append(input, amount);
  } else if (setting.kind === "int") {
    input = el("input");
    input.type = "number";
    input.min = String(setting.min ?? 0);
    input.value = setting.default === null ? "" : String(setting.default);
    input.placeholder = setting.optional ? (setting.default === null ? "default" : "none") : "";
    label.append(input);
  } else {
    input = el("input");
    input.value = JSON.stringify(setting.default);
    label.append(input);
  }
  input.dataset.role = "value";
  return label;
}

function readSettings() {
  const rules = { num_players: Number($("num-players").value) };
  for (const setting of options.settings) {
    if (setting.name === "num_players") continue;
    const label = document.querySelector(`[data-setting="${setting.name}"]`);
    const input = label.querySelector('[data-role="value"]');
    if (setting.kind === "bool") rules[setting.name] = input.checked;
    else if (setting.kind === "choice") rules[setting.name] = input.value;
    else if (setting.kind === "match_end") {
      const amount = label.querySelector('[data-part="amount"]').value;
      rules.match_end = input.value === "single_hand" ? { single_hand: true } : { [input.value]: Number(amount) };
    } else if (setting.kind === "int") {
      if (input.value.trim() === "") {
        if (setting.optional) rules[setting.name] = null;
      } else rules[setting.name] = Number(input.value);
    } else {
      try { rules[setting.name] = JSON.parse(input.value); } catch { rules[setting.name] = input.value; }
    }
  }
  return rules;
}

function buildSeats() {
  const players = Number($("num-players").value);
  const seat = $("seat");
  const chosenSeat = Math.min(Number(seat.value || 0), players - 1);
  seat.replaceChildren();
  for (let s = 0; s < players; s++) seat.append(new Option(`seat ${s}`, String(s)));
  seat.value = String(chosenSeat);
  const box = $("opponents");
  const previous = [...box.querySelectorAll("select")].map((s) => s.value);
  box.replaceChildren(el("legend", "", "Opponents (in seat order after you)"));
  for (let i = 0; i < players - 1; i++) {
    const label = el("label", "", `opponent ${i + 1}`);
    const select = el("select");
    select.className = "opponent";
    for (const player of options.opponents) {
      select.append(new Option(player.kind === "bot" ? player.name : `${player.name} (${player.kind})`, player.name));
    }
    select.value = previous[i] || "greedy";
    label.append(select);
    box.append(label);
  }
}

$("setup-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("setup-error").textContent = "";
  const body = {
    rules: readSettings(),
    seat: Number($("seat").value),
    opponents: [...document.querySelectorAll("#opponents select")].map((s) => s.value),
    match: $("mode").value === "match",
  };
  // the digits as typed: a 64-bit seed is not exact as a JavaScript number
  if ($("seed").value.trim() !== "") body.seed = $("seed").value.trim();
  $("start").disabled = true;
  try {
    const state = await api("POST", "/api/games", body);
    startPlaying(state);
  } catch (error) {
    $("setup-error").textContent = error.message;
  } finally {
    $("start").disabled = false;
  }
});

// ------------------------------------------------------------------ playing
const play = { state: null, source: null, busy: false };

function startPlaying(state) {
  play.state = state;
  play.source = null;
  sessionStorage.setItem("skipbo-game", state.id);
  show("game");
  say(state.waiting_for === "you" ? "Your turn: click a card, then a pile." : "");
  drawGame();
  runOpponents();
}

function say(text, refused = false) {
  const message = $("message");
  message.textContent = text;
  message.classList.toggle("refused", refused);
}

function drawGame() {
  const state = play.state;
  const yourTurn = state.waiting_for === "you" && !play.busy;
  document.body.dataset.waiting = play.busy ? "busy" : state.waiting_for;  // for styles and tests
  renderTable($("table"), state, {
    viewer: state.viewer,
    shownHand: (seat) => seat === state.viewer,
    interactive: yourTurn,
    source: play.source,
    onSource: (src) => { play.source = src; drawGame(); },
    onTarget: (kind, pile) => sendMove({ ...play.source, to: kind, pile }),
  });
  $("undo").disabled = !state.can_undo || play.busy;
  const endTurn = state.legal.find((m) => m.id === 144);
  $("end-turn").hidden = !endTurn || !yourTurn;
  $("quit").hidden = state.status === "over";
  drawLegal(state, yourTurn);
  drawLog(state);
  drawBanner(state);
  drawScoreSheet(state);
}

function drawLegal(state, yourTurn) {
  const list = $("legal");
  list.replaceChildren();
  for (const move of state.legal) {
    const item = el("li");
    const button = el("button", "", move.words);
    button.type = "button";
    button.disabled = !yourTurn;
    button.addEventListener("click", () => sendAction(move.id));
    item.append(button);
    list.append(item);
  }
}

function drawLog(state) {
  const list = $("log");
  list.replaceChildren();
  for (const entry of state.log) {
    const item = el("li", entry.who === "you" ? "you" : "", `${entry.who}: ${entry.words}`);
    list.append(item);
  }
  list.scrollTop = list.scrollHeight;
}

function drawBanner(state) {
  const banner = $("banner");
  banner.replaceChildren();
  if (state.status === "playing") { banner.hidden = true; return; }
  banner.hidden = false;
  let text = outcomeWords(state, state.viewer);
  if (state.status === "over" && state.ending && state.ending !== "finished") {
    text = state.ending === "quit" ? "You left the game." : `The game stopped: ${state.ending}.`;
  }
  if (state.match && state.match.is_over) {
    const winners = state.match.winners.map((s) => (s === state.viewer ? "you" : `seat ${s}`)).join(" and ");
    text += ` The match is over: ${winners} won.`;
  }
  banner.append(el("strong", "", text));
  if (state.status === "hand_over") {
    const next = el("button", "primary", `Deal hand ${state.match.hand_number + 1}`);
    next.id = "next-hand";
    next.addEventListener("click", () => command("continue"));
    banner.append(next);
  }
  if (state.status === "over") {
    const download = el("a", "button", "Download the game");
    download.href = `/api/games/${encodeURIComponent(state.id)}/record`;
    download.setAttribute("download", state.saved_as || "skipbo-game.json");
    download.id = "download-game";
    banner.append(download);
    if (state.saved_as) {
      const watch = el("a", "button", "Watch the replay");
      watch.href = `#watch=${encodeURIComponent(state.saved_as)}`;
      watch.id = "watch-replay";
      banner.append(watch);
    }
  }
}

function drawScoreSheet(state) {
  const box = $("score-sheet");
  box.replaceChildren();
  if (!state.match) { box.hidden = true; return; }
  box.hidden = false;
  const match = state.match;
  const teamName = (team) => team.map((s) => (s === state.viewer ? "you" : `seat ${s}`)).join(" + ");
  const table = el("table");
  const head = el("tr");
  head.append(el("th", "", "hand"), ...match.teams.map((team) => el("th", "", teamName(team))));
  table.append(head);
  for (const row of match.sheet) {
    const tr = el("tr");
    tr.append(el("td", "", `${row.hand}${row.outcome === "win" ? "" : ` (${row.outcome})`}`),
      ...row.points.map((p) => el("td", "", String(p))));
    table.append(tr);
  }
  const total = el("tr");
  total.append(el("th", "", "total"), ...match.totals.map((t) => el("th", "", String(t))));
  table.append(total);
  const end = match.match_end;
  const caption = el("caption", "", "target" in end ? `first to ${end.target}` : "rounds" in end ? `${end.rounds} hands` : "one hand");
  table.prepend(caption);
  box.append(table);
}

async function sendMove(move) {
  play.source = null;
  delete move.index;  // which of equal hand cards was clicked: the engine needs only the value
  await perform(() => api("POST", `/api/games/${play.state.id}/act`, { move }));
}

async function sendAction(action) {
  play.source = null;
  await perform(() => api("POST", `/api/games/${play.state.id}/act`, { action }));
}

async function command(name) {
  play.source = null;
  await perform(() => api("POST", `/api/games/${play.state.id}/${name}`));
}

// Run one request; a refusal is shown with the server's reason and the table stays as it was.
async function perform(request) {
  if (play.busy) return;
  try {
    play.state = await request();
    const last = play.state.log[play.state.log.length - 1];
    say(last ? `${last.who}: ${last.words}` : "");
  } catch (error) {
    say(`✗ ${error.message}`, true);
    if (error.status === 404) sessionStorage.removeItem("skipbo-game");
    drawGame();
    return;
  }
  drawGame();
  await runOpponents();
}

// The opponents move one at a time, the chosen delay apart, until it is the person's turn.
async function runOpponents() {
  if (play.busy || play.state.waiting_for !== "opponent") return;
  play.busy = true;
  try {
    while (play.state.waiting_for === "opponent") {
      drawGame();
      await sleep(delay());
      play.state = await api("POST", `/api/games/${play.state.id}/advance`);
      const last = play.state.log[play.state.log.length - 1];
      if (last) say(`${last.who}: ${last.words}`);
    }
    if (play.state.waiting_for === "you") {
      const last = play.state.log[play.state.log.length - 1];
      say(`${last ? `${last.who}: ${last.words}. ` : ""}Your turn: click a card, then a pile.`);
    }
  } catch (error) {
    say(`✗ ${error.message}`, true);
  } finally {
    play.busy = false;
  }
  drawGame();
}

$("undo").addEventListener("click", () => command("undo"));
$("quit").addEventListener("click", () => command("quit"));
$("end-turn").addEventListener("click", () => sendAction(144));
$("new-game").addEventListener("click", () => { sessionStorage.removeItem("skipbo-game"); play.state = null; show("setup"); });
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && play.source) { play.source = null; drawGame(); }
});

// ------------------------------------------------------------------ watching replays
const watch = { file: "", hands: [], hand: 0, move: 0, shown: new Set(), playing: false, cache: new Map() };

async function loadReplayList(select) {
  const { files } = await api("GET", "/api/replays");
  const chooser = $("replay-file");
  chooser.replaceChildren(new Option("(choose)", ""));
  for (const file of files) chooser.append(new Option(file.name, file.name));
  if (select) chooser.value = select;
}

async function openReplay(name) {
  $("watch-error").textContent = "";
  watch.playing = false;
  watch.cache.clear();
  if (!name) { $("replay-body").hidden = true; return; }
  try {
    const data = await api("GET", `/api/replays/file?file=${encodeURIComponent(name)}`);
    watch.file = name;
    watch.hands = data.hands;
    const handSelect = $("replay-hand");
    handSelect.replaceChildren();
    data.hands.forEach((hand, i) => handSelect.append(new Option(hand.label || `hand ${i + 1}`, String(i))));
    const download = $("replay-download");
    download.href = `/api/replays/download?file=${encodeURIComponent(name)}`;
    download.hidden = false;
    await openHand(0);
  } catch (error) {
    $("replay-body").hidden = true;
    $("watch-error").textContent = error.message;
  }
}

async function openHand(index) {
  watch.hand = index;
  const hand = watch.hands[index];
  $("replay-hand").value = String(index);
  $("replay-body").hidden = false;
  const who = hand.names.map((n, s) => `seat ${s}: ${n}`).join(", ");
  const saved = hand.matches_saved === true ? " · the replay matches the saved game exactly"
    : hand.matches_saved === false ? " · the replay does NOT match the saved final position" : "";
  $("replay-info").textContent = `${who} · seed ${hand.seed} · ${hand.num_moves} moves${saved}`;
  const box = $("replay-hands");
  box.replaceChildren(el("legend", "", "Show hands"));
  watch.shown = new Set(hand.names.map((_, s) => s));
  hand.names.forEach((name, seat) => {
    const label = el("label");
    const check = el("input");
    check.type = "checkbox";
    check.checked = true;
    check.dataset.seat = String(seat);
    check.addEventListener("change", () => {
      if (check.checked) watch.shown.add(seat); else watch.shown.delete(seat);
      drawReplay();
    });
    label.append(check, document.createTextNode(` seat ${seat} (${name})`));
    box.append(label);
  });
  $("replay-total").textContent = String(hand.num_moves);
  $("replay-move").max = String(hand.num_moves);
  $("replay-slider").max = String(hand.num_moves);
  const list = $("replay-moves");
  list.replaceChildren();
  hand.moves.forEach((move) => {
    const item = el("li", "", `turn ${move.turn} · ${move.who}: ${move.words}`);
    item.dataset.move = String(move.index);
    item.addEventListener("click", () => goTo(move.index));
    list.append(item);
  });
  await goTo(0);
}

async function position(move) {
  const key = `${watch.hand}:${move}`;
  if (!watch.cache.has(key)) {
    const url = `/api/replays/position?file=${encodeURIComponent(watch.file)}&hand=${watch.hand + 1}&move=${move}`;
    watch.cache.set(key, await api("GET", url));
  }
  return watch.cache.get(key);
}

async function goTo(move) {
  const hand = watch.hands[watch.hand];
  move = Math.max(0, Math.min(hand.num_moves, move));
  try {
    watch.state = await position(move);
  } catch (error) {
    $("watch-error").textContent = error.message;
    return;
  }
  watch.move = move;
  drawReplay();
}

function drawReplay() {
  const hand = watch.hands[watch.hand];
  const state = watch.state;
  renderTable($("replay-table"), state, {
    viewer: null, shownHand: (seat) => watch.shown.has(seat), interactive: false, source: null,
  });
  $("replay-move").value = String(watch.move);
  $("replay-slider").value = String(watch.move);
  let now = watch.move === 0 ? "The deal." : `Move ${watch.move}: ${hand.moves[watch.move - 1].who} — ${hand.moves[watch.move - 1].words}`;
  if (watch.move === hand.num_moves) {
    now += state.outcome ? ` ${outcomeWords(state, null)}` : " (the record stops here: the hand was left unfinished)";
  }
  $("replay-now").textContent = now;
  for (const item of $("replay-moves").children) {
    const current = Number(item.dataset.move) === watch.move;
    item.classList.toggle("current", current);
    if (current) item.scrollIntoView({ block: "nearest" });
  }
  $("replay-play").textContent = watch.playing ? "Pause" : "Play";
}

async function playReplay() {
  watch.playing = !watch.playing;
  drawReplay();
  while (watch.playing && watch.move < watch.hands[watch.hand].num_moves) {
    await sleep(Math.max(delay(), 50));
    if (!watch.playing) break;
    await goTo(watch.move + 1);
  }
  watch.playing = false;
  drawReplay();
}

$("replay-file").addEventListener("change", (event) => { location.hash = `#watch=${encodeURIComponent(event.target.value)}`; });
$("replay-refresh").addEventListener("click", () => loadReplayList(watch.file));
$("replay-hand").addEventListener("change", (event) => openHand(Number(event.target.value)));
$("replay-first").addEventListener("click", () => goTo(0));
$("replay-back").addEventListener("click", () => goTo(watch.move - 1));
$("replay-forward").addEventListener("click", () => goTo(watch.move + 1));
$("replay-last").addEventListener("click", () => goTo(watch.hands[watch.hand].num_moves));
$("replay-play").addEventListener("click", playReplay);
$("replay-move").addEventListener("change", (event) => goTo(Number(event.target.value)));
$("replay-slider").addEventListener("input", (event) => goTo(Number(event.target.value)));
document.addEventListener("keydown", (event) => {
  if ($("watch").hidden || !watch.hands.length || event.target.matches("input, select")) return;
  if (event.key === "ArrowLeft") goTo(watch.move - 1);
  if (event.key === "ArrowRight") goTo(watch.move + 1);
});

// ------------------------------------------------------------------ views and the address bar
function show(view) {
  for (const id of ["setup", "game", "watch"]) $(id).hidden = id !== view;
  $("nav-play").classList.toggle("active", view !== "watch");
  $("nav-watch").classList.toggle("active", view === "watch");
}

async function route() {
  const hash = location.hash;
  if (hash.startsWith("#watch")) {
    show("watch");
    const name = hash.startsWith("#watch=") ? decodeURIComponent(hash.slice(7)) : "";
    try { await loadReplayList(name); } catch (error) { $("watch-error").textContent = error.message; }
    if (name && name !== watch.file) await openReplay(name);
    return;
  }
  try { await loadOptions(); } catch (error) { $("setup-error").textContent = error.message; }
  if (play.state) { show("game"); return; }
  const saved = sessionStorage.getItem("skipbo-game");
  if (saved) {
    try { startPlaying(await api("GET", `/api/games/${encodeURIComponent(saved)}`)); return; } catch { sessionStorage.removeItem("skipbo-game"); }
  }
  show("setup");
}

window.addEventListener("hashchange", route);
route();
