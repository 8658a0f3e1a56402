"""``load_policy(spec)``: one way to name any player on the command line or in a config.

Accepted specs:

- a bot name: ``random``, ``greedy``, ``planner``, ``expert``, ``learned``, ``neural`` (see
  :data:`agents.registry.BOTS`;
  ``learned:weights=path.json`` plays other trained weights);
- a shipped player by name: a row of the one table of them, :data:`agents.shipped.SHIPPED_PLAYERS` (``learned-2p``,
  ``learned-4p``, ``neural-2p``, ``td-scratch-2p``, ``ppo-2p``: the learned bot's weights, the neural bot's networks
  and a policy network, in ``agents/pretrained/``), or another name of one, ``pretrained-2p`` (:data:`PRETRAINED`);
  an old name or an old file name of one still loads it, with a one-line note naming the new one;
- a saved model file ending in ``.zip`` or ``.pt`` (loaded by ``agents.saved_model``);
- ``package.module:ClassName``: a class importable from an installed module;
- ``path/to/file.py:ClassName``: a class in a researcher's own file, loaded without installing.

Any of them may be given a short name first, ``name=spec`` (``mine=bots/mybot.py:StockFirst``;
a name is letters, digits, ``_``, ``.`` and ``-``, starting with a letter or ``_``): tournament
reports, ``skipbo play``'s table and TensorBoard tags show the name instead of the spec.

Any of them may end with options passed to the constructor, after a colon:
``planner:hold_wilds=false,search=true``, ``my_bots.py:MyBot:depth=3``. Values are read as
``true``/``false``, ``none``, integers, floats, or else kept as text. Each class is instantiated
with those keyword arguments; an object that is already a policy is returned unchanged.

Safety: a saved model file is read as tensors and JSON only (``agents.saved_model``): loading
one from a stranger cannot run code, and a file it refuses raises ``SavedModelError``. The
``package.module:ClassName`` and ``path/to/file.py:ClassName`` specs are the opposite: they
import that module or file and run its code, by design, wherever the spec comes from (the
command line, a training config's opponents, or a run folder's saved config on
``skipbo train --resume``). Name only code you trust there.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import re
import sys
import warnings

from agents.learned import LearnedBot
from agents.registry import BOTS
from agents.neural import NeuralBot  # after the registry, which imports it
from agents.shipped import ALIASES, LEARNED, NEURAL, OLD_NAMES, SHIPPED as PLAYERS, SHIPPED_PLAYERS, renamed_file
from agents.spec_names import split_name, unaliased

MODEL_SUFFIXES = (".zip", ".pt")
SHIPPED = {player.name: player.path for player in SHIPPED_PLAYERS}
"""Shipped player name -> its file, from the one table of them (:data:`agents.shipped.SHIPPED_PLAYERS`): the learned
bot's weights (``learned-2p``, ``learned-4p``), the neural bot's networks (``neural-2p``, ``td-scratch-2p``) and the
policy network (``ppo-2p``)."""
PRETRAINED = {**SHIPPED, **{alias: SHIPPED[name] for alias, name in ALIASES.items()}}
"""Every name a shipped player is loaded by -> its file: :data:`SHIPPED` and the documented other names of
``agents.shipped.ALIASES`` (``pretrained-2p``: the strongest two-player player). Old names
(``agents.shipped.OLD_NAMES``) load too, with a note, and are not listed."""


TAG_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
"""The characters a TensorBoard tag part may not hold (:func:`tag_name` writes ``_`` for each)."""

ACCEPTED = (
    f"a bot name ({', '.join(BOTS)}), a shipped model ({', '.join(PRETRAINED)}), a saved model file (.zip or .pt), package.module:ClassName, "
    "or path/to/file.py:ClassName; options may follow after a colon, e.g. planner:hold_wilds=false, "
    "and a short name may come first, e.g. mine=bots/mybot.py:StockFirst"
)



def short_name(spec: str) -> str:
    """What reports show for a spec: its name, or the spec itself when it has none."""
    name, _ = split_name(spec)
    return name if name is not None else spec


def tag_name(spec: str) -> str:
    """A spec as a TensorBoard tag part: its short name, every character but ``A-Za-z0-9_.-`` as ``_``."""
    return TAG_UNSAFE.sub("_", short_name(spec))


RUNS_CODE = ("module:Class and file.py:Class import and run that Python code, so name only code you trust; "
             "a saved model file (.zip or .pt) is read as plain tensors and JSON and cannot run code")
"""The safety note of every help text that accepts policy specs (see the module docstring)."""


class PolicySpecError(ValueError):
    """A policy spec that names nothing loadable; the message lists what is accepted."""


def load_policy(spec, seed: int | None = None):
    """The policy a spec names (see the module docstring), its generator seeded with ``seed``.

    ``seed`` is passed as the ``seed`` keyword to classes whose constructor accepts one.
    Raises :class:`PolicySpecError` naming the spec and the accepted forms, and
    ``agents.saved_model.SavedModelError`` (also a ``ValueError``) for every model file it refuses.
    A model file never runs code; a ``module:Class`` or ``file.py:Class`` spec imports and runs
    that code by design (see the module docstring): pass only specs you trust.
    """
    if hasattr(spec, "act"):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise PolicySpecError(f"policy spec {spec!r} is not a non-empty string: use {ACCEPTED}")
    target, options = split_options(split_name(spec.strip())[1])
    if target.endswith(MODEL_SUFFIXES):
        if options:
            raise PolicySpecError(f"policy spec {spec!r}: a saved model file takes no options")
        return _load_saved_model(target)
    if target in PRETRAINED or target in OLD_NAMES:
        if options:
            raise PolicySpecError(f"policy spec {spec!r}: a shipped model takes no options")
        name = unaliased(target)
        if PLAYERS[name].kind == NEURAL:
            return NeuralBot(seed, model=SHIPPED[name])
        if PLAYERS[name].kind == LEARNED:
            return LearnedBot(seed, weights=SHIPPED[name])
        return _load_saved_model(SHIPPED[name])
    if target in BOTS:
        return _instantiate(BOTS[target], spec, options, seed)
    if ":" in target:
        location, _, attribute = target.rpartition(":")
        return _instantiate(_find_attribute(location, attribute, spec), spec, options, seed)
    raise PolicySpecError(f"unknown policy spec {spec!r}: use {ACCEPTED}")


def split_options(spec: str) -> tuple[str, dict]:
    """``"planner:a=1,b=x"`` -> ``("planner", {"a": 1, "b": "x"})``; no options -> ``{}``."""
    head, sep, tail = spec.rpartition(":")
    if not sep or "=" not in tail:
        return spec, {}
    options = {}
    for item in tail.split(","):
        key, eq, value = item.partition("=")
        if not eq or not key.strip().isidentifier():
            raise PolicySpecError(f"policy spec {spec!r}: option {item!r} is not of the form name=value")
        options[key.strip()] = _parse_value(value.strip())
    return head, options


def _parse_value(text: str):
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "none":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _load_saved_model(path: str):
    renamed = renamed_file(path)
    if renamed is not None:
        warnings.warn(f"note: {path} is now {os.path.join(os.path.dirname(path), renamed.file)} (the shipped player "
                      f"{renamed.name!r}; the old path still works)", FutureWarning, stacklevel=3)
        path = renamed.path
    if not os.path.exists(path):
        raise PolicySpecError(f"saved model {path!r} does not exist (no such file)")
    if os.path.isdir(path):
        raise PolicySpecError(f"saved model {path!r} is not a file (a folder): give a model .zip or .pt file")
    try:
        saved_model = importlib.import_module("agents.saved_model")
    except ModuleNotFoundError as error:
        if error.name != "agents.saved_model":
            raise
        raise PolicySpecError(
            f"cannot load {path!r}: loading saved models needs agents/saved_model.py "
            "(load_saved_policy), which this installation lacks"
        ) from None
    return saved_model.load_saved_policy(path)


def _find_attribute(location: str, attribute: str, spec: str):
    if location.endswith(".py"):
        module = _import_file(location, spec)
    elif location.startswith("."):
        raise PolicySpecError(f"policy spec {spec!r}: {location!r} is a relative module; give package.module:Class "
                              "or path/to/file.py:Class")
    else:
        try:
            module = importlib.import_module(location)
        except (Exception, SystemExit) as error:  # a missing module, or one whose own code fails as it loads
            raise PolicySpecError(f"policy spec {spec!r}: cannot import module {location!r} "
                                  f"({type(error).__name__}: {error})") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise PolicySpecError(f"policy spec {spec!r}: {location!r} defines no {attribute!r}") from None


def _import_file(path: str, spec: str):
    """Import a Python file by path under a name derived from it, without installing anything."""
    if not os.path.isfile(path):
        raise PolicySpecError(f"policy spec {spec!r}: file {path!r} does not exist")
    absolute = os.path.abspath(path)
    digest = hashlib.sha1(absolute.encode()).hexdigest()[:12]
    module_name = f"skipbo_user_policy_{digest}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    module_spec = importlib.util.spec_from_file_location(module_name, absolute)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    try:
        module_spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:  # the file's own code (a syntax error, a missing import, sys.exit)
        del sys.modules[module_name]
        raise PolicySpecError(f"policy spec {spec!r}: importing {path!r} raised {type(error).__name__}: "
                              f"{error}") from None
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def _instantiate(target, spec: str, options: dict, seed: int | None):
    if not inspect.isclass(target):
        if options:
            raise PolicySpecError(f"policy spec {spec!r}: options need a class, and {target!r} is not one")
        return _checked_policy(target, spec)
    parameters = _constructor_parameters(target)
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    unknown = [name for name in options if name not in parameters and not takes_any]
    if unknown:
        allowed = ", ".join(name for name in parameters if name != "seed") or "none"
        raise PolicySpecError(
            f"policy spec {spec!r}: {target.__name__} has no option {', '.join(unknown)}; its options: {allowed}"
        )
    kwargs = dict(options)
    if seed is not None and ("seed" in parameters or takes_any):
        kwargs.setdefault("seed", seed)
    try:
        policy = target(**kwargs)
    except (TypeError, ValueError) as error:
        raise PolicySpecError(f"policy spec {spec!r}: {target.__name__}(...) refused the options: {error}") from None
    except (Exception, SystemExit) as error:  # the class's own constructor failed
        raise PolicySpecError(f"policy spec {spec!r}: {target.__name__}(...) raised {type(error).__name__}: "
                              f"{error}") from None
    return _checked_policy(policy, spec)


def _constructor_parameters(cls) -> dict:
    try:
        return dict(inspect.signature(cls).parameters)
    except (TypeError, ValueError):
        return {}


def _checked_policy(policy, spec: str):
    if not callable(getattr(policy, "act", None)):
        raise PolicySpecError(
            f"policy spec {spec!r} names {policy!r}, which has no act(observation) method; "
            "a policy needs act(observation: dict) -> int"
        )
    return policy
