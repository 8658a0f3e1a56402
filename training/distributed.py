"""Work done in this process or spread over a Ray cluster, with the same results for a seed.

:class:`WorkPool` maps a work function over work items::

    with WorkPool(config.ray.address, config.ray.workers) as pool:   # None: this process; else Ray
        seeds = rng.integers(0, 2**62, size=games)                  # on the driver, the run's generator
        results = pool.map(play_game, [(int(seed), seat) for seed, seat in zip(seeds, seats)],
                           shared=(rules.to_dict(), weights))       # play_game(shared, item) -> result

``pool.map(function, items, shared)`` returns ``[function(shared, item) for item in items]``, in the
order of ``items``, wherever each call ran: in this process one after the other, or on Ray one task
per item, spread over the cluster's nodes. What makes a result the same for a seed, on one process
or on a hundred machines, is a contract between the caller and its work function:

- **A work item** is a picklable value (numbers, strings, tuples, lists, dicts, numpy arrays) that
  holds everything its call needs, **its seeds included**. The driver draws every seed from the run's
  own generator before it maps (the deal seeds of a candidate's games, the deal and policy seeds
  of a self-play game) and writes them into the items; the function draws nothing from the clock,
  the process, the machine or a generator of its own that the item does not seed. Results
  gathered in input order then make the same run, call for call, however the calls were placed.
- **shared** is one picklable value that every call of a ``map`` reads (the rules, a parameter
  table, a network's weights as numpy arrays). On Ray it is put in the object store once per
  ``map``, not shipped once per item. The function must not modify it.
- **The function** takes ``(shared, item)`` and is defined at module level in a module of this
  project (``training.snes.trainer.play_candidate``): not a lambda, closure, bound method or a
  function of ``__main__``. Ray ships it by its import name and each machine imports it from its
  own install of the project, which must be the same version as the driver's (README, Ray section).
  It may keep a per-process cache of what is costly to build (a network rebuilt from weights) in
  a module-level dict keyed by what it is built from, as long as the cache never changes a result.
  A Ray task reserves one CPU: a function that runs threads (the batched engine's ``threads``)
  should run one there; :attr:`WorkPool.on_ray` tells the caller, which passes it in ``shared``.
- **A result** is a picklable value. Each Ray task reserves one CPU, and tasks are spread over
  the nodes (Ray's ``SPREAD`` strategy), so an item should be worth a task (tens of milliseconds
  or more: group small work into bigger items). An exception raised by a call is raised from
  ``map`` (on Ray a ``ray.exceptions.RayTaskError``, which is also an instance of the original
  exception's class) and the calls still pending are cancelled.

``address``: ``None`` runs every call in this process (no Ray needed); ``"local"`` starts a Ray
instance on this machine (listening on 127.0.0.1 only, ``workers`` CPUs, default the machine's);
``"auto"`` joins the cluster this machine is part of; ``"HOST:PORT"`` joins that cluster's head
(``ray start --head`` prints it); the driver runs on a machine of that cluster. A Ray already
initialised in this process is used as it is (and left running). :class:`evaluation.ray_runner.RayConnectionError`
(a ``ValueError``) says when Ray is not installed or no cluster answers there: a ``HOST:PORT`` where nothing
listens, or where what listens does not answer as a Ray head does within seconds (a web server, say), is
refused before ``ray.init`` (:func:`evaluation.ray_runner.check_port_answers`), which would retry it for minutes.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable
from evaluation.ray_runner import connect_ray


class WorkPool:
    """Where work functions run: in this process (``address=None``) or as Ray tasks (see the module docstring)."""

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        self.address = address
        self.last_nodes: list[str] = []
        """The Ray node id each item of the latest ``map`` ran on, in input order (empty in this process)."""
        self._task = None
        self._started_ray = False
        if address is not None:
            self._started_ray = connect_ray(address, num_cpus=workers)
            import ray

            self._task = ray.remote(num_cpus=1, scheduling_strategy="SPREAD")(call_on_node)

    @property
    def on_ray(self) -> bool:
        return self._task is not None

    def map(self, function: Callable[[Any, Any], Any], items: Iterable, shared: Any = None) -> list:
        """``[function(shared, item) for item in items]``, in input order, here or as one Ray task per item."""
        items = list(items)
        if self._task is None:
            return [function(shared, item) for item in items]
        import ray

        shared_ref = ray.put(shared)
        refs = [self._task.remote(function, shared_ref, item) for item in items]
        try:
            placed = ray.get(refs)
        except BaseException:
            for ref in refs:
                ray.cancel(ref)
            raise
        self.last_nodes = [node for node, _ in placed]
        return [result for _, result in placed]

    def describe(self) -> str:
        """Where the calls run, for a run's log: ``in this process`` or the Ray cluster's nodes and CPUs."""
        if self._task is None:
            return "in this process"
        import ray

        return (f"as Ray tasks on {len(ray.nodes())} node(s), {ray.cluster_resources().get('CPU', 0):g} CPUs "
                f"({self.address})")

    def close(self) -> None:
        """Shut down the Ray instance or connection this pool started (one it found is left running)."""
        if self._started_ray:
            import ray

            ray.shutdown()
            self._started_ray = False
        self._task = None

    def __enter__(self) -> "WorkPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def call_on_node(function: Callable[[Any, Any], Any], shared: Any, item: Any) -> tuple[str, Any]:
    """The body of a Ray task: the id of the node it ran on, and ``function(shared, item)``."""
    import ray

    return ray.get_runtime_context().get_node_id(), function(shared, item)

