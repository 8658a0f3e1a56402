"""The prose of the rules engine: a move in words, why an action is not legal, how a hand ended.

Kept apart from :mod:`skipbo_env.game`, which reads as the rulebook; everything here only
reads a game and explains it, in the words a player at the table would use. The command line,
the web table and the replays tell moves with :func:`move_words`.
"""

from __future__ import annotations


from skipbo_env.actions import (
    END_TURN,
    FIRST_DISCARD,
    NUM_ACTIONS,
    PARTNER_STOCK_SOURCE,
    STOCK_SOURCE,
    action_id,
    describe_action,
    discard_pile,
    discard_value,
    play_action,
    play_pile,
    play_source,
    safe_repr,
    source_kind,
    source_words,
)
from skipbo_env.cards import TOP_VALUE, WILD, canonical_slots, card_name


def why_illegal(game, action) -> str:
    """Why ``action`` is not legal in ``game``'s position, in a player's words (the message of
    :class:`~skipbo_env.game.IllegalActionError`)."""
    index = action_id(action)
    if index is None or not 0 <= index < NUM_ACTIONS:
        return (f"{safe_repr(action)} is not an action id: use an int (or a numpy integer) from 0 to "
                f"{NUM_ACTIONS - 1}")
    action = index
    what = f"action {action} ({describe_action(action)}) is not legal"
    if game.outcome is not None:
        return f"{what}: the hand is over ({game.outcome})"
    seat = game.current_seat
    if action == END_TURN:
        return f"{what}: end turn needs an empty hand and nothing to draw; seat {seat} holds {game.hand_sizes[seat]} cards"
    if action >= FIRST_DISCARD:
        value = discard_value(action)
        if not game.hand_counts[seat][value]:
            return f"{what}: seat {seat} holds no {card_name(value)} in hand (only hand cards can be discarded)"
        return f"{what}: a new discard pile must use the lowest empty slot, discard pile {canonical_slots(game.discards[seat])[-1] + 1}"
    if game.turn_play_limit_reached():
        then = "discard to end the turn" if game.hand_sizes[seat] else f"end the turn (id {END_TURN})"
        return (f"{what}: seat {seat} has played {game.plays_this_turn} cards this turn, the limit "
                f"(max_turn_plays={game.rules.max_turn_plays}); no further play is legal: {then}")
    source, slot = play_source(action), play_pile(action)
    card, reason = source_card(game, seat, source)
    if reason:
        return f"{what}: {reason}"
    needed = dict(game.open_building_piles())
    if slot not in needed:
        lowest = next(s for s, pile in enumerate(game.building) if not pile)
        return f"{what}: a new building pile must use the lowest empty slot, building pile {lowest + 1}"
    return f"{what}: building pile {slot + 1} needs a {needed[slot]} (or SKIP-BO), not a {card_name(card)}"


def source_card(game, seat: int, source: int, you: bool = False) -> tuple[int, str]:
    """The card a play from ``source`` would take for ``seat`` and, if there is none, why: told about the
    seat ("seat 1's stockpile is empty") or, with ``you``, to its player ("your stockpile is empty")."""
    if source < STOCK_SOURCE:
        if game.hand_counts[seat][source + 1]:
            return source + 1, ""
        return source + 1, f"you hold no {card_name(source + 1)}" if you else f"seat {seat} holds no {card_name(source + 1)} in hand"
    partner = game.partner_of(seat)
    if source >= PARTNER_STOCK_SOURCE and partner is None:
        return 0, "plays from a partner's piles exist only in partners games"
    if source == PARTNER_STOCK_SOURCE and game.rules.team_stock == "shared":
        return 0, f"with team_stock='shared' the team's stockpile is played as the own stockpile (ids {play_action(STOCK_SOURCE, 0)}-{play_action(STOCK_SOURCE, 3)})"
    kind, index = source_kind(source)
    owner = partner if kind.startswith("partner") else seat
    pile = game.stocks[owner] if kind.endswith("stock") else game.discards[owner][index]
    if pile:
        return pile[-1], ""
    own, partners = ("your ", "your partner's") if you else (f"seat {seat}'s " if kind == "stock" else "", "the partner's")
    return 0, f"{source_words(source, own, partners)} is empty"


def move_words(game, action: int, subject: str = "", you: bool = True) -> str:
    """A legal ``action`` of the seat to act in words, told before it is taken (the cards it moves are read
    from ``game``), e.g. "play the 7 from your stockpile on building pile 2".

    ``subject`` starts the sentence ("You", "seat 1 (greedy)"); without one the move reads as an
    instruction. ``you`` addresses the one who moves ("your stockpile"); without it the piles are named
    for any reader ("seat 1 (greedy) plays the 7 from stockpile ...", "the partner's stockpile").
    """
    start = f"{subject} " if subject else ""
    third_person = bool(subject) and not you

    def verb(word: str) -> str:
        return word + "s" if third_person else word

    own = "your " if you else ""
    if action == END_TURN:
        return f"{start}{verb('end')} the turn (empty hand, nothing left to draw)"
    if action >= FIRST_DISCARD:
        return f"{start}{verb('discard')} {_card_words(discard_value(action))} onto {own}discard pile {discard_pile(action) + 1}"
    source, pile = play_source(action), play_pile(action)
    card, _ = source_card(game, game.current_seat, source)
    need = len(game.building[pile]) + 1
    what = f"a SKIP-BO as the {need}" if card == WILD else _card_words(card)
    where = source_words(source, own, "your partner's" if you else "the partner's")
    target = f"building pile {pile + 1}"
    if need == 1:
        target += " (new pile)"
    elif need == TOP_VALUE:
        target += " (completes it)"
    return f"{start}{verb('play')} {what} from {where} on {target}"


def _card_words(value: int) -> str:
    return "a SKIP-BO" if value == WILD else f"the {value}" if value else "no card"


def outcome_sentence(game, names: list[str]) -> str:
    """How the hand ended, as one sentence naming the seats by ``names`` (``"you"`` for a viewer);
    empty while the hand is running."""
    if game.outcome == "win":
        winners = " and ".join(names[seat] for seat in game.winners)
        return f"{winners[0].upper() + winners[1:]} won the hand: {game.points()[game.winners[0]]} points."
    if game.outcome == "draw":
        return "The hand ended in a draw: nothing was left to play or draw, and nobody scores."
    if game.outcome == "truncated":
        return f"The hand was cut off after {game.turn} turns (max_turns): nobody scores."
    return ""
