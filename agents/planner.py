"""``planner``: the strongest heuristic bot here. It searches its whole turn.

At each decision the planner decodes the observation and searches every sequence of plays it
can make this turn from what it sees: hand cards (a multiset), the tops of its discard piles
(and the cards under them, which are public), its stockpile top and, in partners, the partner's
stockpile and discard tops. Building piles are simulated on copies of the decoded piles (a pile
that reaches 12 empties). What it cannot see is modelled simply: once a stockpile top is played
the next one is unknown, so that stockpile is not played again in the search; once the hand is
empty, the five cards drawn are unknown, so the search carries on without a hand and counts the
draw as a bonus. The search remembers the positions it reached (plays in a different order often
lead to the same position), so it stays small. It acts on the first play of the best sequence,
or discards when stopping is best, and searches again at the next decision with what the play
revealed.

A sequence is worth (see :class:`PlannerBot` for the switches that turn each idea off):

- ``STOCK`` for every stockpile top it plays (the partner's too); winning the hand beats all;
- ``hold_wilds``: a SKIP-BO card from the hand or a discard pile costs ``WILD_COST`` unless the
  sequence plays a stockpile card, so wilds are kept for the stockpile;
- ``draw_bonus``: emptying the hand (five new cards) is worth ``DRAW``; every hand card played
  ``HAND_PLAY`` and every discard top played ``DISCARD_PLAY`` (it uncovers the card below);
- ``avoid_feeding``: the building piles it leaves are charged ``FEED`` times the chance that the
  opponents who play next can reach their stockpile top from them (their visible discard tops
  fill part of the gap, the cards they will hold the rest: :func:`reach_table` gives the chance
  for that many unknown cards, so an opponent with a short hand and nothing to draw threatens
  less); so cards at or above its own stockpile value are played only when they do not help an
  opponent, and a pile is pushed past an opponent's value when that is cheap. The next seat
  counts most (``SEAT_WEIGHTS``);
- ``endgame``: an opponent's threat grows as its stockpile shrinks (times ``1 + ENDGAME / size``),
  since its last cards decide the hand;
- ``own_stock_gap``: piles it leaves just below its own stockpile top, with the missing cards in
  its hand or on its discard tops, are worth ``GAP`` times the chance to reach it next turn;
- ``partner_help`` (partners): the same chance for the partner's stockpile is worth ``PARTNER``;
- ``break_stalemate``: when nothing can be drawn (draw pile and completed piles empty) a hand
  heads for a draw; then every card played is worth ``STALL_PLAY``, a completed pile (which
  becomes the new draw pile) ``STALL_COMPLETE``, wilds cost nothing and feeding counts
  ``STALL_FEED`` as much, so the planner plays on instead of waiting for a draw;
- ``always_block``: charge any pile at an opponent's exact stockpile value so heavily that the
  planner blocks it at nearly any cost; public bots found this hurts, so it is off here too
  (against ``greedy`` it measured within noise of the default, see the project notes).

The discard (``smart_discard``) goes onto a pile whose top is the same value or one higher, never
buries a low card under a higher one when it can help it, spreads over empty piles, and keeps
SKIP-BO cards; switched off, it discards like ``greedy`` (a random card on a random pile).
"""

from __future__ import annotations

from agents.planner_weights import (BLOCK, DISCARD_PLAY, DRAW, ENDGAME, FEED, GAP, HAND_PLAY, PARTNER, SEAT_WEIGHTS,
                                     STALL_COMPLETE, STALL_FEED, STALL_PLAY, STOCK, SWITCHES, WILD_COST, WIN, reach_table)
from agents.policy import Bot, legal_actions
from skipbo_env.actions import (
    DISCARD_SOURCE,
    END_TURN,
    FIRST_DISCARD,
    PARTNER_DISCARD_SOURCE,
    PARTNER_STOCK_SOURCE,
    STOCK_SOURCE,
    discard_pile,
    discard_value,
    hand_play_action,
    play_action,
    play_pile,
    play_source,
)
from skipbo_env.cards import HAND_SIZE, NUM_BUILDING_PILES, TOP_VALUE, WILD
from skipbo_env.encoding import decode_observation

REACH = reach_table()
_NO_CARDS = [0] * (WILD + 1)


def reach_chance(cards: int, missing: int) -> float:
    """The chance to fill ``missing`` cards of a chain from ``cards`` unknown cards."""
    if missing == 0:
        return 1.0
    if missing > 12:
        return 0.0
    return REACH[max(0, min(cards, HAND_SIZE))][missing]


class _Seat:
    """Another seat as the planner sees it, and its chance to reach its stockpile top from each pile.

    ``chance_from[need]``: the chance that the seat, on its next turn, builds from a pile that
    needs ``need`` up to its stockpile top, using its visible discard tops and ``cards`` unknown
    cards in hand (its hand size, topped up to five when it can draw).
    """

    __slots__ = ("weight", "stock_top", "chance_from")

    def __init__(self, info: dict, weight: float, can_draw: int, endgame: bool = False) -> None:
        if endgame and info["stock_size"]:
            weight *= 1.0 + ENDGAME / info["stock_size"]
        self.weight = weight
        self.stock_top = target = info["stock_top"]
        cards = min(HAND_SIZE, info["hand_size"] + can_draw)
        self.chance_from = [0.0] * (TOP_VALUE + 1)
        if target and target != WILD:
            discards = [list(pile) for pile in info["discards"]]
            for need in range(1, target + 1):
                self.chance_from[need] = reach_chance(cards, chain_missing(need, target, _NO_CARDS, discards))


def chain_missing(need: int, target: int, counts: list[int], tops: list[list[int]]) -> int:
    """How many cards are missing to build from ``need`` up to ``target - 1`` (:func:`chain_gaps`)."""
    return len(chain_gaps(need, target, counts, tops))


def chain_gaps(need: int, target: int, counts, piles) -> list[int]:
    """The values missing to build from ``need`` up to ``target - 1``.

    ``counts[v]`` cards of value ``v`` (13 = SKIP-BO) and the discard piles ``piles`` (bottom to
    top, used from the top down) fill the chain in order; each value neither holds is missing.
    """
    piles = [list(p) for p in piles if p]
    counts = list(counts)
    gaps = []
    for value in range(need, target):
        if counts[value]:
            counts[value] -= 1
            continue
        for pile in piles:
            if pile and (pile[-1] == value or pile[-1] == WILD):
                pile.pop()
                break
        else:
            if counts[WILD]:
                counts[WILD] -= 1
            else:
                gaps.append(value)
    return gaps


class TurnSearchBot(Bot):
    """A bot that searches its whole turn (:class:`TurnSearch`): it plays the first play of the best
    sequence, or discards when stopping is best. A subclass builds the search of a decision
    (:meth:`turn`, with its own valuation) and chooses the discard (:meth:`discard`); its keyword
    switches are named in ``SWITCHES``. ``PlannerBot`` and ``agents.expert.ExpertBot`` are two."""

    SWITCHES: tuple[str, ...] = ()
    search = True
    """Whether the search looks past the first play (the planner's ``search`` switch)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{name}={getattr(self, name)}' for name in self.SWITCHES)})"

    def act(self, observation: dict) -> int:
        legal = legal_actions(observation)
        if len(legal) == 1:
            return int(legal[0])
        view = decode_observation(observation["observation"])
        plays = [int(a) for a in legal if a < FIRST_DISCARD]
        if plays:
            best = self.turn(view).best_first_play(plays)
            if best is not None:
                return best
        discards = [int(a) for a in legal if FIRST_DISCARD <= a < END_TURN]
        if not discards:
            return END_TURN if END_TURN in legal else int(legal[0])
        return self.discard(view, discards)

    def turn(self, view: dict) -> TurnSearch:
        """The search of this decision's turn (``view``: the decoded observation)."""
        raise NotImplementedError

    def discard(self, view: dict, discards: list[int]) -> int:
        """One of the legal ``discards`` (ids), chosen when stopping is best."""
        raise NotImplementedError


class PlannerBot(TurnSearchBot):
    """Searches its whole turn for the best sequence of plays; every idea is a switch.

    Keyword switches (all ``True`` by default except ``always_block``): ``search`` (whole-turn
    search; off: only one play ahead), ``hold_wilds``, ``draw_bonus``, ``avoid_feeding``,
    ``endgame``, ``own_stock_gap``, ``partner_help``, ``break_stalemate``, ``smart_discard``,
    ``always_block``. See the module docstring for what each does. On the command line:
    ``planner:always_block=true,hold_wilds=false``.
    """

    name = "planner"
    SWITCHES = SWITCHES

    def __init__(
        self,
        seed: int | None = None,
        *,
        search: bool = True,
        hold_wilds: bool = True,
        draw_bonus: bool = True,
        avoid_feeding: bool = True,
        own_stock_gap: bool = True,
        partner_help: bool = True,
        smart_discard: bool = True,
        always_block: bool = False,
        break_stalemate: bool = True,
        endgame: bool = True,
    ) -> None:
        super().__init__(seed)
        self.search = search
        self.hold_wilds = hold_wilds
        self.draw_bonus = draw_bonus
        self.avoid_feeding = avoid_feeding
        self.own_stock_gap = own_stock_gap
        self.partner_help = partner_help
        self.smart_discard = smart_discard
        self.always_block = always_block
        self.break_stalemate = break_stalemate
        self.endgame = endgame
        self.nodes = 0

    def turn(self, view: dict) -> _Turn:
        return _Turn(view, self)

    def discard(self, view: dict, discards: list[int]) -> int:
        if self.smart_discard:
            return choose_discard(view, discards)
        value = self.choose(view["hand"])
        return self.choose([a for a in discards if discard_value(a) == value])


def opponents_in_turn_order(view: dict) -> list[tuple[float, dict]]:
    """``(SEAT_WEIGHTS weight, seat)`` of each opponent of a decoded observation, next seat first (partner skipped)."""
    seats, partner = view["seats"], view["partner"]
    others = [offset for offset in range(1, len(seats)) if offset != partner]
    return [(SEAT_WEIGHTS[min(rank, len(SEAT_WEIGHTS) - 1)], seats[offset]) for rank, offset in enumerate(others)]


class TurnSearch:
    """The search over one turn's plays from a decoded observation; a subclass says what stopping
    in a search position is worth (:meth:`stop_value`).

    A search position is ``(needs, hand, my heights, partner heights, stock played, partner stock
    played)``: the value each building pile needs, the hand's copies per value, how many cards of
    each visible discard pile are left, and whether the own and the partner's stockpile tops were
    played. ``bot`` is the :class:`TurnSearchBot` searching (its ``search`` switch and node count).
    """

    def __init__(self, view: dict, bot: TurnSearchBot) -> None:
        self.bot = bot
        seats = view["seats"]
        me = seats[0]
        self.needs = tuple(view["building_next"])
        self.hand = tuple(view["hand_counts"])
        self.hand_size0 = sum(self.hand)
        self.my_piles = _visible_piles(me)
        partner = view["partner"]
        shared = view["team_stock"] == "shared"
        self.partner_piles = _visible_piles(seats[partner]) if partner is not None else [[], [], [], []]
        self.partner_seat = seats[partner] if partner is not None and not shared else None
        """The partner when it has a stockpile of its own (``None`` without a partner, or with a shared one)."""
        self.stock_top = me["stock_top"]
        self.stock_size = me["stock_size"]
        self.partner_top = self.partner_seat["stock_top"] if self.partner_seat is not None else 0
        self.partner_size = self.partner_seat["stock_size"] if self.partner_seat is not None else 0
        self.partners = partner is not None
        self.shared = shared
        self.team_win = view["team_win"]
        self.can_draw = view["draw_pile_size"] + view["completed_size"]
        self.memo: dict = {}
        self.position_memo: dict = {}

    def best_first_play(self, plays: list[int]) -> int | None:
        """The first play of the best sequence, or ``None`` when stopping now (discarding) is best."""
        root = (self.needs, self.hand, tuple(len(p) for p in self.my_piles),
                tuple(len(p) for p in self.partner_piles), 0, 0)
        best_value = self.stop_value(root)
        best_action = None
        for action in sorted(plays, key=_root_order):
            child, value_now = self.apply(root, action)
            if child is None:
                value = value_now
            elif self.bot.search:
                value = self.value(child)
            else:
                value = self.stop_value(child)
            if value > best_value + 1e-9:
                best_value, best_action = value, action
        return best_action

    def value(self, state) -> float:
        """The best value reachable from ``state`` (stopping included), memoised on the position."""
        key = (tuple(sorted(state[0])),) + state[1:]
        cached = self.memo.get(key)
        if cached is not None:
            return cached
        self.bot.nodes += 1
        best = self.stop_value(state)
        for action in self.moves(state):
            child, value_now = self.apply(state, action)
            value = value_now if child is None else self.value(child)
            if value > best:
                best = value
        self.memo[key] = best
        return best

    def moves(self, state) -> list[int]:
        """Plays from ``state``, one pile per distinct value needed (equal piles are the same)."""
        needs, hand, mine, theirs, stock_done, partner_done = state
        moves = []
        seen = set()
        for slot in range(NUM_BUILDING_PILES):
            need = needs[slot]
            if need in seen:
                continue
            seen.add(need)
            if not stock_done and self.stock_top and (self.stock_top == need or self.stock_top == WILD):
                moves.append(play_action(STOCK_SOURCE, slot))
            if not partner_done and self.partner_top and (self.partner_top == need or self.partner_top == WILD):
                moves.append(play_action(PARTNER_STOCK_SOURCE, slot))
            for pile in range(4):
                height = mine[pile]
                if height:
                    card = self.my_piles[pile][height - 1]
                    if card == need or card == WILD:
                        moves.append(play_action(DISCARD_SOURCE + pile, slot))
                height = theirs[pile]
                if height:
                    card = self.partner_piles[pile][height - 1]
                    if card == need or card == WILD:
                        moves.append(play_action(PARTNER_DISCARD_SOURCE + pile, slot))
            if hand[need]:
                moves.append(hand_play_action(need, slot))
            if hand[WILD]:
                moves.append(hand_play_action(WILD, slot))
        return moves

    def apply(self, state, action: int):
        """``(child, None)`` after one play, or ``(None, value)`` when the play wins the hand."""
        needs, hand, mine, theirs, stock_done, partner_done = state
        source, slot = play_source(action), play_pile(action)
        if source < STOCK_SOURCE:
            hand = hand[:source + 1] + (hand[source + 1] - 1,) + hand[source + 2:]
        elif source == STOCK_SOURCE:
            stock_done = 1
        elif source < PARTNER_STOCK_SOURCE:
            pile = source - DISCARD_SOURCE
            mine = mine[:pile] + (mine[pile] - 1,) + mine[pile + 1:]
        elif source == PARTNER_STOCK_SOURCE:
            partner_done = 1
        else:
            pile = source - PARTNER_DISCARD_SOURCE
            theirs = theirs[:pile] + (theirs[pile] - 1,) + theirs[pile + 1:]
        need = needs[slot] + 1
        needs = needs[:slot] + ((1 if need > TOP_VALUE else need),) + needs[slot + 1:]
        child = (needs, hand, mine, theirs, stock_done, partner_done)
        if (source == STOCK_SOURCE or source == PARTNER_STOCK_SOURCE) and self.wins(child):
            return None, WIN
        return child, None

    def wins(self, state) -> bool:
        """Whether the stockpile plays of ``state`` end the hand in this seat's (team's) favour."""
        own_empty = state[4] and self.stock_size == 1
        if not self.partners or self.shared:
            return bool(own_empty)
        partner_empty = (state[5] and self.partner_size == 1) or self.partner_size == 0
        own_empty = own_empty or self.stock_size == 0
        if self.team_win == "either":
            return bool(own_empty or partner_empty)
        return bool(own_empty and partner_empty)

    # ------------------------------------------------------------------ what a sequence played
    def stop_value(self, state) -> float:
        """The worth of stopping in ``state`` (the subclass's valuation)."""
        raise NotImplementedError

    def discards_played(self, mine, theirs) -> int:
        """How many discard-pile tops (mine and the partner's) the sequence up to heights ``mine``, ``theirs``
        played."""
        return (sum(len(p) for p in self.my_piles) - sum(mine)
                + sum(len(p) for p in self.partner_piles) - sum(theirs))

    def wilds_used(self, hand, mine, theirs) -> int:
        """How many SKIP-BO cards, from the hand and the discard piles, the sequence up to ``hand``, ``mine``,
        ``theirs`` played."""
        used = self.hand[WILD] - hand[WILD]
        for piles, heights in ((self.my_piles, mine), (self.partner_piles, theirs)):
            for pile, height in zip(piles, heights):
                used += pile[height:].count(WILD)
        return used

    def completed(self, needs) -> int:
        """How many building piles the sequence completed (their need fell back)."""
        return sum(1 for before, after in zip(self.needs, needs) if after < before)


class _Turn(TurnSearch):
    """The planner's search of one turn: :class:`TurnSearch` with the planner's valuation."""

    def __init__(self, view: dict, bot: PlannerBot) -> None:
        super().__init__(view, bot)
        self.stalled = bot.break_stalemate and not self.can_draw
        self.feed = FEED * STALL_FEED if self.stalled else FEED
        self.opponents = [_Seat(info, weight, self.can_draw, bot.endgame)
                          for weight, info in opponents_in_turn_order(view)]
        self.partner_chances = _Seat(self.partner_seat, 1.0, self.can_draw) if self.partner_seat is not None else None

    # ------------------------------------------------------------------ evaluation
    def stop_value(self, state) -> float:
        """The worth of stopping in ``state``: what the plays gained plus what the piles promise."""
        bot = self.bot
        needs, hand, mine, theirs, stock_done, partner_done = state
        stock_cards = stock_done + partner_done
        value = STOCK * stock_cards
        hand_left = sum(hand)
        wilds_used = self.wilds_used(hand, mine, theirs)
        numbers_played = self.hand_size0 - hand_left - (self.hand[WILD] - hand[WILD])
        discards_played = self.discards_played(mine, theirs)
        value += HAND_PLAY * numbers_played
        value += DISCARD_PLAY * discards_played
        if bot.hold_wilds:
            if not stock_cards and not self.stalled:
                value -= WILD_COST * wilds_used
        else:
            value += HAND_PLAY * wilds_used
        if hand_left == 0 and bot.draw_bonus:
            value += DRAW
        if self.stalled:
            played = self.hand_size0 - hand_left + stock_cards + discards_played
            value += STALL_PLAY * played + STALL_COMPLETE * self.completed(needs)
        value += self.position_value(needs, hand, mine, stock_done)
        return value

    def position_value(self, needs, hand, mine, stock_done) -> float:
        """What the building piles left behind mean for the opponents, the partner and me."""
        bot = self.bot
        key = (needs, hand, mine, stock_done) if bot.own_stock_gap else needs
        cached = self.position_memo.get(key)
        if cached is not None:
            return cached
        value = 0.0
        if bot.avoid_feeding or bot.always_block:
            for seat in self.opponents:
                chance = self.reach_chance(needs, seat)
                value -= self.feed * seat.weight * chance
                if bot.always_block and seat.stock_top in needs:
                    value -= BLOCK * seat.weight
        if bot.partner_help and self.partner_chances is not None:
            value += PARTNER * self.reach_chance(needs, self.partner_chances)
        if bot.own_stock_gap and not stock_done and self.stock_top and self.stock_top != WILD:
            piles = [pile[:height] for pile, height in zip(self.my_piles, mine)]
            missing = min(self._gap_missing(need, self.stock_top, hand, piles) for need in set(needs))
            kept = sum(hand)
            drawn = HAND_SIZE if kept == 0 else min(HAND_SIZE + 1 - kept, self.can_draw)
            value += GAP * reach_chance(drawn, missing)
        self.position_memo[key] = value
        return value

    @staticmethod
    def reach_chance(needs, seat: _Seat) -> float:
        """The chance ``seat`` reaches its stockpile top from any of the piles ``needs``.

        The distinct needs are taken in slot order (a fixed order of the product, which the batched
        planner of ``agents.batched.planner`` repeats float for float)."""
        miss_all = 1.0
        for need in dict.fromkeys(needs):
            miss_all *= 1.0 - seat.chance_from[need]
        return 1.0 - miss_all

    @staticmethod
    def _gap_missing(need: int, target: int, hand, piles) -> int:
        if need > target:
            return 99
        return chain_missing(need, target, hand, piles)


def _visible_piles(seat: dict) -> list[list[int]]:
    """Discard piles as far as they are known: all of a pile, or its visible top when it is deeper."""
    return [list(pile) for pile in seat["discards"]]


def _root_order(action: int) -> tuple[int, int]:
    """Try stockpile plays first, then discard tops, then hand numbers, then hand SKIP-BO cards.

    Among sequences of equal worth the first found is kept, so the planner plays its stockpile
    (which reveals the next card) before anything else.
    """
    source = action // 4
    if source in (STOCK_SOURCE, PARTNER_STOCK_SOURCE):
        rank = 0
    elif source >= DISCARD_SOURCE:
        rank = 1
    elif source == WILD - 1:
        rank = 3
    else:
        rank = 2
    return rank, action


# ---------------------------------------------------------------------- discarding
def choose_discard(view: dict, discards: list[int]) -> int:
    """The best legal discard by :func:`discard_score` (ties: the lowest id)."""
    me = view["seats"][0]
    tops = [pile[-1] if pile else 0 for pile in me["discards"]]
    needs = view["building_next"]
    hand = view["hand_counts"]
    only_wilds = sum(hand) == hand[WILD]
    best, best_score = discards[0], None
    for action in discards:
        value, slot = discard_value(action), discard_pile(action)
        score = discard_score(value, tops[slot], needs, hand, me["stock_top"], only_wilds)
        if best_score is None or score > best_score:
            best, best_score = action, score
    return best


def discard_score(card: int, top: int, needs, hand, stock_top: int, only_wilds: bool = False) -> float:
    """How good it is to discard ``card`` onto a pile whose top is ``top`` (0: an empty pile).

    Same value or one higher on top is best (the run stays playable from the top down); an empty
    pile is good, better for a high card; burying a lower card, above all one a building pile
    needs soon, is bad; SKIP-BO cards are kept.
    """
    score = 0.0
    if card == WILD:
        return -100.0 if not only_wilds else 0.0
    if top == 0:
        score += 2.5 + 0.15 * card
    elif top == card:
        score += 4.0
    elif top == card + 1:
        score += 5.0
    elif top > card:
        score += 2.0 - 0.3 * (top - card - 1)
    else:
        score -= 3.0 + 0.3 * (TOP_VALUE - top)
        if top in needs or top == WILD:
            score -= 5.0
    if top and top != WILD:
        soon = min(((top - need) % TOP_VALUE) for need in needs)
        if top < card and soon <= 2:
            score -= 2.0
    distance = min(((card - need) % TOP_VALUE) for need in needs)
    score += 0.2 * min(distance, 6)
    if hand[card] > 1:
        score += 0.5
    if card == stock_top:
        score -= 0.5
    return score
