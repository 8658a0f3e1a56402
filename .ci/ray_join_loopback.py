"""``ray start ARGS`` for a node that joins a head on this machine with every server on 127.0.0.1 (CI: two Ray
nodes on one machine, nothing reachable from outside it).

Ray keeps a node's servers on 127.0.0.1 only while clusters are off (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``,
evaluation.ray_runner.bind_to_loopback), and then refuses to join a node to a head; with clusters on it swaps
127.0.0.1 for the machine's network address and listens on every interface. In this process only, the join is
allowed and the node's address stays 127.0.0.1; the node's own processes inherit clusters off from the
environment, as the head's do.
"""

import sys

from ray._private import ray_constants, services
from ray.scripts.scripts import cli

ray_constants.ENABLE_RAY_CLUSTER = True
services.get_node_ip_address = lambda address=None: "127.0.0.1"
cli(["start", *sys.argv[1:]], prog_name="ray")
