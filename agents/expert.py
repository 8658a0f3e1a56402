"""``expert``: the planner's whole-turn search with an evaluation built as a race of stockpile cards.

The expert searches its turn exactly as ``planner`` does (the same moves, the same memo, the
same modelling of what it cannot see: a played stockpile top hides the next one, an emptied
hand draws unknown cards), so the two differ only in how they value the position a sequence of
plays leaves behind, and in how they discard. The planner adds many small bonuses; the expert
counts, in stockpile cards, what decides a hand: the cards it plays now, the cards it can
expect to play next turn, and the cards the opponents can expect to play before then. Each idea is a switch (all on by
default), so ``expert:card_counting=false`` measures what it is worth:

- ``card_counting``: chances come from the cards still unseen (the observation's ``unseen``
  counts: the draw pile, the other hands, the stockpiles' hidden cards), not from the deck's
  shares, so a value whose copies are all in sight is known to be scarce, and SKIP-BO cards
  are as likely as what is left of them;
- ``threat``: the building piles left behind are charged ``THREAT`` stockpile cards times the
  chance that each opponent, in turn order, builds from them up to its stockpile top with its
  visible discard piles and the cards it will hold (as the planner's ``avoid_feeding``, priced
  with the counted chances and the endgame weight);
- ``own_prospects``: the chance to play my own stockpile top next turn, from the piles I
  leave, the cards I keep, my discard piles and the cards I will draw, is worth ``PROSPECT``
  stockpile cards (the planner's ``own_stock_gap`` is worth a twentieth of a card); with it
  the expert keeps the cards that lead to its stockpile and plays away the rest;
- ``hold_wilds``: a SKIP-BO card from the hand or a discard pile costs ``WILD_COST`` (a quarter
  of a stockpile card; the planner's cost is a sixteenth) unless the sequence plays a
  stockpile card (or the hand is stalled), so wilds are kept for the jumps to the stockpile
  that nothing else makes, and rarely spent on blocking or emptying the hand;
- ``plan_discards``: the discard is chosen for the turns to come. It keeps the chance to reach
  the stockpile top next turn (from the kept hand and the discard piles with that card on
  top), and above all the *coverage* of hand and discard piles: for every value a building
  pile may need, how many cards in a row they can play from it (:func:`run_length`), so a card
  goes where it continues a descending run (9-8-7 plays 7, 8, 9), high cards go together, and
  a card that starts a run is not buried (``COVERAGE`` per card of average run). The planner's
  pile-shape score breaks ties. Switched off it discards as the planner does.

Measured against ``planner`` (two players, 30-card stockpiles, 400 duplicate-deal games at seed
7, ``skipbo evaluate --agents expert planner --games 400 --seed 7 --stock-size 30``): the first
weights (``WILD_COST`` 0.06, no coverage) won 54.0%, and without ``threat`` 24.8%, without
``hold_wilds`` 46.5%, without ``plan_discards`` 50.0%, without ``own_prospects`` 51.7%, without
``card_counting`` 55.8% (within noise); ``WILD_COST`` 0.25 won 57.8%, and coverage on top 65.8%.
The final weights, checked on other deals (seed 1): 64.1% [62.0%, 66.2%] of 2,000 games.

Partners and stalled hands are valued as the planner values them (the partner's chance to reach
its stockpile, and every play counted when nothing can be drawn), so the expert plays every
variant. It draws nothing at random and keeps no memory between decisions (a node counter
aside): given an observation it always decides the same way.
"""

from __future__ import annotations

from functools import lru_cache

from agents.expert_weights import (DISCARD_MARGIN, DISCARD_WEIGHTS, DRAW, ENDGAME, ODDS_DIGITS,
                                    PROSPECT, SWITCHES, THREAT, WILD_COST)
from agents.planner import (
    DISCARD_PLAY,
    HAND_PLAY,
    PARTNER,
    STALL_COMPLETE,
    STALL_FEED,
    STALL_PLAY,
    STOCK,
    TurnSearch,
    TurnSearchBot,
    chain_gaps,
    choose_discard,
    discard_score,
    opponents_in_turn_order,
)
from skipbo_env.actions import discard_pile, discard_value
from skipbo_env.cards import (
    HAND_SIZE,
    NUM_VALUES,
    TOP_VALUE,
    WILD,
    deck_counts,
)

@lru_cache(maxsize=65536)
def fill_chance(cards: int, missing: int, per_value: float, per_wild: float) -> float:
    """The chance that ``cards`` random cards hold ``missing`` distinct values or SKIP-BO cards for them.

    Each card is one of the missing values not yet held (``per_value`` each), a SKIP-BO card
    (``per_wild``) or neither; cards are drawn independently.
    """
    if missing <= 0:
        return 1.0
    if cards < missing:
        return 0.0
    spread = {0: 1.0}  # useful cards held (a missing value or a wild) -> chance, capped at missing
    for _ in range(cards):
        after: dict = {}
        for held, chance in spread.items():
            if held >= missing:
                after[held] = after.get(held, 0.0) + chance
                continue
            useful = (missing - held) * per_value + per_wild
            after[held + 1] = after.get(held + 1, 0.0) + chance * useful
            after[held] = after.get(held, 0.0) + chance * (1.0 - useful)
        spread = after
    return spread.get(missing, 0.0)


def run_length(need: int, counts, piles) -> int:
    """How many cards in a row, from ``need`` up, the number cards ``counts`` and the discard piles ``piles`` build."""
    piles = [list(p) for p in piles if p]
    counts = list(counts)
    length = 0
    for value in range(need, TOP_VALUE + 1):
        if counts[value]:
            counts[value] -= 1
        else:
            pile = next((p for p in piles if p and p[-1] == value), None)
            if pile is None:
                return length
            pile.pop()
        length += 1
    return length


class _Odds:
    """The chance of one unknown card per value: counted from the unseen cards, or the deck's shares."""

    def __init__(self, view: dict, counting: bool) -> None:
        counts = view["unseen_counts"] if counting else deck_counts(1)
        total = sum(counts[1:NUM_VALUES + 1])
        if total <= 0:
            counts, total = deck_counts(1), sum(deck_counts(1)[1:])
        self.per_value = [c / total for c in counts]
        self.per_wild = counts[WILD] / total

    def fill(self, cards: int, gaps: list[int]) -> float:
        """The chance ``cards`` unknown cards fill every value of ``gaps``."""
        if not gaps:
            return 1.0
        if len(gaps) > cards:
            return 0.0
        shares = 0.0
        for value in gaps:  # summed in order, one addition at a time (sum() compensates from Python 3.12 on)
            shares += self.per_value[value]
        return fill_chance(cards, len(gaps), round(shares / len(gaps), ODDS_DIGITS), round(self.per_wild, ODDS_DIGITS))


class Rival:
    """Another seat: its weight and its chance to reach its stockpile top from a pile needing each value."""

    __slots__ = ("chance_from", "weight")

    def __init__(self, info: dict, weight: float, can_draw: int, odds: _Odds) -> None:
        if info["stock_size"]:
            weight *= 1.0 + ENDGAME / info["stock_size"]
        self.weight = weight
        target = info["stock_top"]
        cards = min(HAND_SIZE, info["hand_size"] + can_draw)
        self.chance_from = [0.0] * (TOP_VALUE + 2)
        if target == WILD:
            self.chance_from = [1.0] * (TOP_VALUE + 2)
        elif target:
            no_cards = [0] * (WILD + 1)
            for need in range(1, target + 1):
                self.chance_from[need] = odds.fill(cards, chain_gaps(need, target, no_cards, info["discards"]))

    def chance(self, needs) -> float:
        """The chance to reach the stockpile top from any of the piles ``needs``."""
        miss_all = 1.0
        for need in dict.fromkeys(needs):
            miss_all *= 1.0 - self.chance_from[need]
        return 1.0 - miss_all


class ExpertTurn(TurnSearch):
    """The planner's turn search (:class:`agents.planner.TurnSearch`) with the expert's valuation of where it stops."""

    def __init__(self, view: dict, bot: ExpertBot) -> None:
        super().__init__(view, bot)
        self.stalled = not self.can_draw
        self.odds = _Odds(view, bot.card_counting)
        self.rivals = [Rival(info, weight, self.can_draw, self.odds) for weight, info in opponents_in_turn_order(view)]
        self.partner_rival = Rival(self.partner_seat, 1.0, self.can_draw, self.odds) \
            if self.partner_seat is not None else None

    def stop_value(self, state) -> float:
        """The worth of stopping in ``state``, in stockpile cards (scaled by ``STOCK``)."""
        bot = self.bot
        needs, hand, mine, theirs, stock_done, partner_done = state
        stock_cards = stock_done + partner_done
        hand_left = sum(hand)
        discards_played = self.discards_played(mine, theirs)
        wilds_used = self.wilds_used(hand, mine, theirs)
        cards = float(stock_cards)
        cards += (HAND_PLAY * (self.hand_size0 - hand_left) + DISCARD_PLAY * discards_played) / STOCK
        if bot.hold_wilds and not stock_cards and not self.stalled:
            cards -= WILD_COST * wilds_used
        if hand_left == 0 and self.can_draw:
            cards += DRAW
        if self.stalled:
            played = self.hand_size0 - hand_left + stock_cards + discards_played
            cards += (STALL_PLAY * played + STALL_COMPLETE * self.completed(needs)) / STOCK
        cards += self.position_value(needs, hand, mine, stock_done)
        return STOCK * cards

    def position_value(self, needs, hand, mine, stock_done) -> float:
        """What the piles left behind promise the opponents, the partner and me, in stockpile cards."""
        bot = self.bot
        key = (needs, hand, mine, stock_done)
        cached = self.position_memo.get(key)
        if cached is not None:
            return cached
        value = 0.0
        if bot.threat:
            threat = THREAT * (STALL_FEED if self.stalled else 1.0)
            for rival in self.rivals:
                value -= threat * rival.weight * rival.chance(needs)
        if self.partner_rival is not None:
            value += PARTNER / STOCK * self.partner_rival.chance(needs)
        if bot.own_prospects and not stock_done:
            kept = sum(hand)
            drawn = HAND_SIZE if kept == 0 else min(HAND_SIZE + 1 - kept, self.can_draw)
            value += PROSPECT * self._reach_chance(needs, hand, mine, drawn)
        self.position_memo[key] = value
        return value

    def _reach_chance(self, needs, hand, mine, drawn: int) -> float:
        """The chance to reach my stockpile top from the best of ``needs``: ``hand``, my piles, ``drawn`` cards."""
        target = self.stock_top
        if not target:
            return 0.0
        if target == WILD:
            return 1.0
        piles = [pile[:height] for pile, height in zip(self.my_piles, mine)]
        best = 0.0
        for need in set(needs):
            if need > target:
                continue
            chance = self.odds.fill(drawn, chain_gaps(need, target, hand, piles))
            best = max(best, chance)
        return best


class ExpertBot(TurnSearchBot):
    """The planner's turn search, valued as a race of stockpile cards; every idea is a switch.

    Keyword switches (all ``True`` by default): ``card_counting``, ``threat``, ``own_prospects``,
    ``hold_wilds``, ``plan_discards``. See the module docstring for what each
    does. On the command line: ``expert:card_counting=false,threat=false``.
    """

    name = "expert"
    SWITCHES = SWITCHES

    def __init__(
        self,
        seed: int | None = None,
        *,
        card_counting: bool = True,
        threat: bool = True,
        own_prospects: bool = True,
        hold_wilds: bool = True,
        plan_discards: bool = True,
    ) -> None:
        super().__init__(seed)
        self.card_counting = card_counting
        self.threat = threat
        self.own_prospects = own_prospects
        self.hold_wilds = hold_wilds
        self.plan_discards = plan_discards
        self.nodes = 0

    def turn(self, view: dict) -> ExpertTurn:
        return ExpertTurn(view, self)

    def discard(self, view: dict, discards: list[int]) -> int:
        if self.plan_discards:
            return self._planned_discard(view, discards)
        return choose_discard(view, discards)

    def _planned_discard(self, view: dict, discards: list[int], weights=DISCARD_WEIGHTS) -> int:
        """The discard that leaves the best chance to reach the stockpile next turn, then the best shape
        (``weights``: of the shape, the coverage and the reach)."""
        shape_weight, coverage_weight, reach_weight = weights
        me = view["seats"][0]
        piles = [list(p) for p in me["discards"]]
        tops = [pile[-1] if pile else 0 for pile in piles]
        needs = view["building_next"]
        hand = view["hand_counts"]
        only_wilds = sum(hand) == hand[WILD]
        odds = _Odds(view, self.card_counting)
        target = me["stock_top"]
        drawn = min(HAND_SIZE + 1 - sum(hand), view["draw_pile_size"] + view["completed_size"])
        best, best_score = discards[0], None
        for action in discards:
            card, slot = discard_value(action), discard_pile(action)
            score = shape_weight * discard_score(card, tops[slot], needs, hand, target, only_wilds)
            kept = list(hand)
            kept[card] -= 1
            after = [p + [card] if i == slot else p for i, p in enumerate(piles)]
            runs = sum(run_length(need, kept, after) for need in range(1, TOP_VALUE + 1))
            score += coverage_weight * runs / TOP_VALUE
            if target and target != WILD:
                score += reach_weight * max((odds.fill(drawn, chain_gaps(need, target, kept, after))
                                             for need in set(needs) if need <= target), default=0.0)
            if best_score is None or score > best_score + DISCARD_MARGIN:
                best, best_score = action, score
        return best


__all__ = ["ExpertBot", "chain_gaps", "fill_chance"]
