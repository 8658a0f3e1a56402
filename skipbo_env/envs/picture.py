"""The table as a picture (``render_mode="rgb_array"``, ``skipbo replay --png``), drawn with matplotlib.

It shows what :mod:`skipbo_env.envs.render` writes as text: the building piles (the value each
counts as, a SKIP-BO on top marked), the draw and completed pile sizes, one row per seat with its
stockpile top and size, its hand size and its four discard piles (the top cards fanned, the
number of cards below them written), and the hand of one seat: the viewer's (default the seat
to act). Cards are coloured as the printed cards are: 1-4 blue, 5-8 green, 9-12 red, SKIP-BO
orange. The drawing uses matplotlib's Agg canvas directly (no pyplot, no window, no global
backend change).
"""

from __future__ import annotations

import io

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from skipbo_env.cards import NUM_VALUES, WILD
from skipbo_env.envs.render import status_line  # the text view's status line, one wording for both

CARD_W, CARD_H = 1.0, 1.4
FAN_STEP = 0.36
"""Horizontal offset between the fanned cards of a discard pile."""
FAN_CARDS = 6
"""Discard cards drawn per pile; the cards below them are counted in a label."""
SEAT_ROW_H = 2.1
DPI = 100
TABLE = "#2e6b3f"
SEAT_TO_ACT = "#3f8a52"


def card_colour(value: int) -> str:
    if value == WILD:
        return "#f28c28"
    return ("#2f6fd6", "#2e9e4f", "#d2363a")[(value - 1) // 4]


def _card(ax, x: float, y: float, value: int | None, label: str | None = None, covered: bool = False) -> None:
    """A card with its lower-left corner at (x, y); ``value`` None draws an empty slot; a
    ``covered`` card (under another in a fan) shows only its corner index."""
    w, h = CARD_W, CARD_H
    if value is None:
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0,rounding_size=0.08",
                                    fill=False, edgecolor="#9cc7a8", linestyle="--", linewidth=1))
    else:
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0,rounding_size=0.08",
                                    facecolor="white", edgecolor="#222222", linewidth=1))
        text = "SB" if value == WILD else str(value)
        ax.text(x + 0.08, y + h - 0.2, text, color=card_colour(value), fontsize=8,
                fontweight="bold", ha="left", va="center")
        if not covered:
            ax.text(x + w / 2, y + h / 2 - 0.05, text, color=card_colour(value), fontsize=15,
                    fontweight="bold", ha="center", va="center")
    if label:
        ax.text(x + w / 2, y - 0.18, label, color="white", fontsize=8, ha="center", va="center")


def _building_row(ax, game, top: float) -> None:
    y = top - CARD_H - 0.5
    ax.text(0.3, top - 0.25, "building piles", color="white", fontsize=9, va="center")
    for slot, pile in enumerate(game.building):
        x = 0.3 + slot * (CARD_W + 0.5)
        if pile:
            label = f"counts {len(pile)}" if pile[-1] == WILD else f"{len(pile)} played"
            _card(ax, x, y, pile[-1] if pile[-1] == WILD else len(pile), label)
        else:
            _card(ax, x, y, None, "empty")
    x = 0.3 + 4 * (CARD_W + 0.5) + 0.6
    ax.text(x, y + CARD_H * 0.7, f"draw pile: {len(game.draw_pile)} cards", color="white", fontsize=10)
    ax.text(x, y + CARD_H * 0.35, f"completed piles: {len(game.completed)} cards", color="white", fontsize=10)


def _seat_row(ax, game, seat: int, name: str, top: float, width: float) -> None:
    acting = game.outcome is None and seat == game.current_seat
    if acting:
        ax.add_patch(FancyBboxPatch((0.1, top - SEAT_ROW_H + 0.1), width - 0.2, SEAT_ROW_H - 0.2,
                                    boxstyle="round,pad=0,rounding_size=0.15", facecolor=SEAT_TO_ACT,
                                    edgecolor="#f5d76e", linewidth=2))
    team = f"  (team {game.rules.team_of(seat) + 1})" if game.rules.partners else ""
    marker = "  - to act" if acting else ""
    ax.text(0.3, top - 0.3, f"{name}{team}   hand: {game.hand_sizes[seat]} cards{marker}", color="white",
            fontsize=10, fontweight="bold" if acting else "normal", va="center")
    y = top - 0.55 - CARD_H
    stock = game.stocks[seat]
    _card(ax, 0.3, y, stock[-1] if stock else None, f"stock: {len(stock)} left")
    for pile_index, pile in enumerate(game.discards[seat]):
        x = 1.9 + pile_index * (CARD_W + FAN_STEP * (FAN_CARDS - 1) + 0.45)
        shown = pile[-FAN_CARDS:]
        if not shown:
            _card(ax, x, y, None, "empty")
        for k, value in enumerate(shown):
            _card(ax, x + k * FAN_STEP, y, value, covered=k < len(shown) - 1)
        if len(pile) > len(shown):
            ax.text(x + 0.5, y - 0.18, f"+{len(pile) - len(shown)} below", color="white", fontsize=8, ha="center",
                    va="center")


def _hand_row(ax, game, viewer: int, name: str, top: float) -> None:
    counts = game.hand_counts[viewer]
    hand = [value for value in range(1, NUM_VALUES + 1) for _ in range(counts[value])]
    ax.text(0.3, top - 0.3, f"hand of {name}" + ("" if hand else ": empty"), color="white", fontsize=10, va="center")
    for k, value in enumerate(hand):
        _card(ax, 0.3 + k * (CARD_W + 0.2), top - 0.55 - CARD_H, value)


def table_figure(game, viewer: int | None = None, names: list[str] | None = None) -> Figure:
    """A matplotlib figure of the table as ``viewer`` (default: the seat to act) sees it."""
    n = game.num_players
    names = names or [f"player_{seat}" for seat in range(n)]
    viewer = game.current_seat if viewer is None else viewer
    width = 1.9 + 4 * (CARD_W + FAN_STEP * (FAN_CARDS - 1) + 0.45) + 0.2
    header, building, hand = 0.7, CARD_H + 0.9, CARD_H + 0.9
    height = header + building + n * SEAT_ROW_H + hand
    figure = Figure(figsize=(width * 0.75, height * 0.75), dpi=DPI, facecolor=TABLE)
    FigureCanvasAgg(figure)
    ax = figure.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_axis_off()
    ax.text(0.3, height - 0.35, f"Skip-Bo, {n} players, turn {game.turn}: {status_line(game, names)}",
            color="white", fontsize=12, fontweight="bold", va="center")
    top = height - header
    _building_row(ax, game, top)
    top -= building
    for seat in range(n):
        _seat_row(ax, game, seat, names[seat], top, width)
        top -= SEAT_ROW_H
    _hand_row(ax, game, viewer, names[viewer], top)
    return figure


def render_picture(game, viewer: int | None = None, names: list[str] | None = None) -> np.ndarray:
    """The table as an RGB image, ``uint8`` of shape (height, width, 3)."""
    figure = table_figure(game, viewer=viewer, names=names)
    figure.canvas.draw()
    return np.asarray(figure.canvas.buffer_rgba())[..., :3].copy()


def png_bytes(game, viewer: int | None = None, names: list[str] | None = None) -> bytes:
    """The same picture as the bytes of a PNG file."""
    buffer = io.BytesIO()
    table_figure(game, viewer=viewer, names=names).savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()
