"""The Skip-Bo table drawn for a terminal with rich, and moves told in words.

Used by ``skipbo play`` (the table as one seat sees it: other hands show only their size)
and ``skipbo replay`` (every hand open, or one seat's view). Cards print as their number and
``SB`` for a SKIP-BO card; piles are numbered from 1, as players count them.

- :func:`render_table`: building piles with the value each needs next, every seat's stockpile
  top and size, hand size and discard piles (bottom to top), the viewer's hand.
- :func:`move_effects`: what a move did, after the move's words (``skipbo_env.explain.move_words``),
  so a person reads it at a glance, e.g. ``seat 1 plays the 7 from stockpile on building pile 2
  · turns up a 9 (6 left)``.
- :func:`legal_move_rows` and :func:`discard_hint`: the legal moves with the keys of
  :mod:`skipbo_cli.move_parser`.
- :func:`score_sheet`: the running totals of a match.
"""

from __future__ import annotations

import dataclasses

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from skipbo_env.actions import (
    END_TURN,
    HAND_SOURCES,
    PARTNER_STOCK_SOURCE,
    STOCK_SOURCE,
    discard_action,
    discard_pile,
    discard_value,
    is_discard,
    is_play,
    play_pile,
    play_source,
)
from skipbo_env.cards import NUM_BUILDING_PILES, NUM_DISCARD_PILES, TOP_VALUE, WILD, card_name, cards_in_order
from skipbo_env.explain import move_words
from skipbo_env.game import Game

DISCARD_CARDS_SHOWN = 8
WILD_STYLE = "bold magenta"


def card_text(value: int) -> str:
    """``"SB"`` for a SKIP-BO card, ``"-"`` for no card, else the number."""
    if value == WILD:
        return "SB"
    return str(value) if value else "-"


def styled_card(value: int, style: str = "") -> Text:
    return Text(card_text(value), style=WILD_STYLE if value == WILD else style)


# ---------------------------------------------------------------------- piles
def building_needs_text(game: Game) -> str:
    """E.g. ``"pile 1 needs 6, pile 2 needs 3, a new pile needs 1"``."""
    parts = [f"pile {slot + 1} needs {len(pile) + 1}" for slot, pile in enumerate(game.building) if pile]
    if any(not pile for pile in game.building):
        parts.append("a new pile needs 1")
    return ", ".join(parts)


# ---------------------------------------------------------------------- what a move did
def _with_article(value: int) -> str:
    """``"a 9"``, ``"an 8"``, ``"a SKIP-BO"``."""
    return f"{'an' if value in (8, 11) else 'a'} {card_name(value)}"


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """What :func:`move_effects` compares: the public counts just before a move."""

    turn: int
    seat: int
    hand_sizes: tuple[int, ...]
    stock_sizes: tuple[int, ...]
    building_sizes: tuple[int, ...]
    completed_size: int
    draw_pile_size: int

    @classmethod
    def of(cls, game: Game) -> "Snapshot":
        return cls(game.turn, game.current_seat, tuple(game.hand_sizes), tuple(len(s) for s in game.stocks),
                   tuple(len(p) for p in game.building), len(game.completed), len(game.draw_pile))


def move_effects(before: Snapshot, action: int, game: Game, viewer: int | None, names: list[str]) -> list[str]:
    """What a move just did besides moving its card: piles, turned-up and drawn cards.

    ``viewer`` sees the cards drawn into their own hand (``None``: every hand is open).
    """
    seat = before.seat
    effects = []
    if is_play(action):
        source, pile = play_source(action), play_pile(action)
        effects.append(_building_effect(before, pile, game))
        if source in (STOCK_SOURCE, PARTNER_STOCK_SOURCE):
            effects.append(_stock_effect(game, seat if source == STOCK_SOURCE else game.partner_of(seat)))
    if _recycled(before, game):
        effects.append("the completed piles are shuffled into a new draw pile")
    same_turn = game.turn == before.turn and not game.is_over
    drawn = game.hand_sizes[seat] - before.hand_sizes[seat] + (1 if is_play(action) and play_source(action) < HAND_SOURCES else 0)
    if same_turn and drawn > 0:
        effects.append(f"hand empty: {_draw_words(game, seat, drawn, viewer, names)}")
    elif not same_turn and not game.is_over:
        nxt = game.current_seat
        drawn = game.hand_sizes[nxt] - before.hand_sizes[nxt]
        if drawn:
            effects.append(_draw_words(game, nxt, drawn, viewer, names))
    return effects


def _building_effect(before: Snapshot, pile: int, game: Game) -> str:
    if before.building_sizes[pile] + 1 == TOP_VALUE:
        return f"pile {pile + 1} reaches 12 and is set aside"
    return f"pile {pile + 1} now at {before.building_sizes[pile] + 1}"


def _stock_effect(game: Game, owner: int) -> str:
    stock = game.stocks[owner]
    if not stock:
        return "the stockpile is empty!"
    return f"turns up {_with_article(stock[-1])} ({len(stock)} left)"


def _recycled(before: Snapshot, game: Game) -> bool:
    completed_now = before.completed_size + TOP_VALUE * sum(
        1 for slot in range(NUM_BUILDING_PILES) if before.building_sizes[slot] == TOP_VALUE - 1
        and not game.building[slot])
    return len(game.completed) < completed_now


def _draw_words(game: Game, seat: int, count: int, viewer: int | None, names: list[str]) -> str:
    """``"seat 1 (greedy) draws 2 cards"``; the cards too when the viewer may see them."""
    cards = f"{count} card{'s' if count != 1 else ''}"
    hand = " ".join(card_text(v) for v in cards_in_order(game.hand_counts[seat]))
    if seat == viewer:
        return f"you draw {cards}, your hand: {hand}"
    if viewer is None:
        return f"{seat_name(names, seat)} draws {cards}, hand: {hand}"
    return f"{seat_name(names, seat, viewer)} draws {cards}"


def seat_name(names: list[str], seat: int, viewer: int | None = None) -> str:
    """``"you"`` for the viewer, else ``"seat 1 (greedy)"``."""
    if seat == viewer:
        return "you"
    return f"seat {seat} ({names[seat]})" if names[seat] else f"seat {seat}"


# ---------------------------------------------------------------------- the table
def render_table(game: Game, viewer: int | None, names: list[str], title: str = "", width: int = 120) -> RenderableType:
    """The whole table. ``viewer`` is the seat whose hand is shown; ``None`` shows every hand.

    ``width`` is the console's: below 100 columns the discard headers take two lines.
    """
    header = Text(title or "Skip-Bo", style="bold")
    header.append(f"   turn {game.turn + 1} · dealer seat {game.dealer} · draw pile {len(game.draw_pile)}"
                  f" · completed piles {len(game.completed) // TOP_VALUE}", style="dim")
    parts: list[RenderableType] = [header, _building_table(game), _seats_table(game, viewer, names, width < 100)]
    if viewer is not None:
        hand = Text("Your hand: ", style="bold")
        for value in cards_in_order(game.hand_counts[viewer]):
            hand.append_text(styled_card(value, "bold"))
            hand.append("  ")
        parts.append(hand)
    return Group(*parts)


def _building_table(game: Game) -> Table:
    table = Table(box=box.ROUNDED, show_header=True, title_justify="left", padding=(0, 2), expand=False,
                  title="Building piles", title_style="bold")
    first_empty = next((slot for slot, pile in enumerate(game.building) if not pile), None)
    for slot in range(NUM_BUILDING_PILES):
        table.add_column(f"pile {slot + 1}", justify="center", min_width=12)
    cells = []
    for slot, pile in enumerate(game.building):
        cell = Text()
        if pile:
            cell.append(str(len(pile)), style="bold cyan")
            if pile[-1] == WILD:
                cell.append(" (SB)", style=WILD_STYLE)
            cell.append(f" → needs {len(pile) + 1}" if len(pile) < TOP_VALUE else "")
        else:
            cell.append("empty", style="dim")
            cell.append(" → needs 1" if slot == first_empty else "", style="")
        cells.append(cell)
    table.add_row(*cells)
    return table


def _seats_table(game: Game, viewer: int | None, names: list[str], narrow: bool) -> Table:
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, expand=False)
    table.add_column("seat")
    table.add_column("stockpile", justify="center", no_wrap=True)
    table.add_column("hand", no_wrap=viewer is not None)
    for slot in range(NUM_DISCARD_PILES):
        table.add_column(f"discard{chr(10) if narrow else ' '}{slot + 1}", max_width=9 if narrow else None)
    for seat in range(game.num_players):
        table.add_row(*_seat_row(game, seat, viewer, names))
    return table


def _seat_row(game: Game, seat: int, viewer: int | None, names: list[str]) -> list[RenderableType]:
    to_act = seat == game.current_seat and not game.is_over
    label = Text("▶ " if to_act else "  ", style="bold green")
    label.append(seat_name(names, seat, viewer) if seat != viewer else f"you (seat {seat})",
                 style="bold" if seat == viewer else "")
    partner = game.partner_of(viewer) if viewer is not None else None
    if seat == partner:
        label.append(" partner", style="green")
    stock = game.stocks[seat]
    stock_cell = styled_card(stock[-1], "bold yellow") if stock else Text("-", style="dim")
    stock_cell.append(f" ({len(stock)} left)", style="dim")
    if viewer is None:
        hand_cell = Text(" ".join(card_text(v) for v in cards_in_order(game.hand_counts[seat])) or "-")
    else:
        hand_cell = Text(f"{game.hand_sizes[seat]} card{'s' if game.hand_sizes[seat] != 1 else ''}")
    return [label, stock_cell, hand_cell, *(_discard_cell(pile) for pile in game.discards[seat])]


def _discard_cell(pile: list[int]) -> Text:
    """A discard pile bottom to top, the top card bold; long piles keep their top cards."""
    if not pile:
        return Text("-", style="dim")
    cell = Text()
    hidden = len(pile) - DISCARD_CARDS_SHOWN
    if hidden > 0:
        cell.append(f"+{hidden} ", style="dim")
    shown = pile[-DISCARD_CARDS_SHOWN:]
    for value in shown[:-1]:
        cell.append_text(styled_card(value, "dim"))
        cell.append(" ")
    cell.append_text(styled_card(shown[-1], "bold"))
    return cell


# ---------------------------------------------------------------------- legal moves
def _play_order(action: int) -> tuple[int, int]:
    """Stockpile plays first, then discard tops and partner piles, then hand cards."""
    return (0 if play_source(action) >= STOCK_SOURCE else 1, action)


def legal_move_rows(game: Game, keys) -> list[tuple[str, str]]:
    """(key, words) of every legal play and of end turn; discards are summed up by :func:`discard_hint`.

    ``keys`` maps an action id to its key (:func:`skipbo_cli.move_parser.key_for_action`).
    """
    legal = game.legal_actions()
    listed = sorted((a for a in legal if is_play(a)), key=_play_order) + [a for a in legal if a == END_TURN]
    return [(keys(a), move_words(game, a)) for a in listed]


def discard_hint(game: Game, keys) -> str:
    """One line for the discards: which cards, which piles, and an example key."""
    discards = [a for a in game.legal_actions() if is_discard(a)]
    if not discards:
        return ""
    values = sorted({discard_value(a) for a in discards})
    piles = sorted({discard_pile(a) + 1 for a in discards})
    seat = game.current_seat
    new_pile = next((slot + 1 for slot, pile in enumerate(game.discards[seat]) if not pile), None)
    pile_words = ", ".join(f"{p} (new)" if p == new_pile else str(p) for p in piles)
    cards = ", ".join(card_text(v) for v in values)
    numbers = [v for v in values if v != WILD]
    example = keys(discard_action(max(numbers) if numbers else WILD, piles[0] - 1))
    return f"discard to end your turn: d<card> <pile>, cards {cards}, discard piles {pile_words}; e.g. {example}"


# ---------------------------------------------------------------------- match score sheet
def team_label(rules, seat: int, names: list[str], viewer: int | None) -> str:
    """The seat's name in singles; ``"seats 0 & 2"`` or ``"you & seat 3"`` for a team."""
    partner = rules.partner_of(seat)
    if partner is None:
        return seat_name(names, seat, viewer)
    if viewer in (seat, partner):
        return f"you & seat {partner if viewer == seat else seat}"
    low, high = sorted((seat, partner))
    return f"seats {low} & {high}"


def score_sheet(rules, hands: list[dict], names: list[str], viewer: int | None) -> Table:
    """One row per finished hand: who won, the points, the running totals per seat or team."""
    teams = [seat for seat in range(rules.num_players) if rules.team_of(seat) == seat]
    target = rules.match_end.get("target")
    title = f"Score sheet (first to {target})" if target else "Score sheet"
    table = Table(title=title, title_style="bold", box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("hand", justify="right")
    table.add_column("result")
    for seat in teams:
        table.add_column(team_label(rules, seat, names, viewer), justify="right")
    totals = [0] * len(teams)
    for number, hand in enumerate(hands, start=1):
        if hand["outcome"] == "win":
            winner = hand["winners"][0]
            result = f"{team_label(rules, winner, names, viewer)} won {hand['points'][winner]}"
            totals[rules.team_of(winner)] += hand["points"][winner]
        else:
            result = f"{hand['outcome']}, no score"
        table.add_row(str(number), result, *(str(total) for total in totals))
    return table
