"""An action is read by value: an exact ``int`` or a numpy integer, never an object that answers for itself."""

import numpy as np
import pytest

from skipbo_env import Game, IllegalActionError, Rules
from skipbo_env.actions import action_id


class AlwaysEqual(int):
    """An int whose ``==`` says yes to everything: ``x in legal_actions()`` would take it for any legal id."""

    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


def _game() -> Game:
    return Game.new(Rules(num_players=2, stock_size=5), seed=3)


def _illegal_id(game: Game) -> int:
    return next(a for a in range(145) if not game.legal_mask()[a])


def test_an_int_subclass_that_equals_everything_is_no_action_id():
    game = _game()
    before = game.record()
    with pytest.raises(IllegalActionError, match="an object of type AlwaysEqual is not an action id"):
        game.step(AlwaysEqual(_illegal_id(game)))
    assert game.record() == before


def test_a_lying_int_with_a_legal_value_is_refused_too():
    game = _game()
    with pytest.raises(IllegalActionError, match="not an action id"):
        game.step(AlwaysEqual(int(game.legal_actions()[0])))


@pytest.mark.parametrize("action", [3.0, "3", True, None, np.float64(3), np.bool_(True)])
def test_only_ints_and_numpy_integers_are_action_ids(action):
    assert action_id(action) is None
    with pytest.raises(IllegalActionError, match="not an action id"):
        _game().step(action)


@pytest.mark.parametrize("kind", [int, np.int64, np.int32, np.uint8, np.intp])
def test_a_legal_id_as_an_int_or_numpy_integer_plays_the_same_move(kind):
    one, two = _game(), _game()
    legal = int(one.legal_actions()[0])
    one.step(legal)
    two.step(kind(legal))
    assert one.record() == two.record() and type(two.record()["actions"][-1]) is int
