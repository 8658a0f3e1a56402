#!/usr/bin/env bash
# CI, Ray part: a real two-node Ray cluster on 127.0.0.1 (a head and a second node joined with
# `ray start --address`, one CPU each); on it `skipbo train rllib_2p` for 2 iterations
# with 2 env runners, the exported policy loaded and evaluated locally and with `skipbo evaluate
# --ray` on the cluster (the two must agree), and a short sNES run (`backend: snes`, its candidate
# games as Ray tasks) and a short neural run (`backend: neural`, its hands and its sNES candidates as Ray tasks), whose tasks must
# land on both nodes and whose weights must equal the same run's in one process; then the cluster is stopped, on failure too. Only the nodes this script started
# are stopped (each `ray start --block` process ends the processes it started); other Ray instances
# on the machine are untouched.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${RLLIB_VENV:-.venv-rllib}/bin
# Ray binds the machine's network address, even with --node-ip-address 127.0.0.1, unless clusters
# are off for this machine (evaluation.ray_runner.bind_to_loopback): this one listens on 127.0.0.1 only.
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0
# Token authentication for every command (`ray status` does not pick up ~/.ray/auth_token by itself).
export RAY_AUTH_MODE=token
WORK=$(mktemp -d)
PORT=$("$BIN/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ADDRESS=127.0.0.1:$PORT
START=$(date +%s)

"$BIN/ray" start --head --block --num-cpus 1 --node-ip-address 127.0.0.1 --port "$PORT" --include-dashboard false \
    --temp-dir "$WORK/ray" >"$WORK/head.log" 2>&1 &
HEAD_PID=$!
NODE_PID=
stop_cluster() {  # each --block process stops what it started: the joined node first, then the head
    for pid in $NODE_PID $HEAD_PID; do
        kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap stop_cluster EXIT
trap 'exit 130' INT TERM

wait_for_nodes() {  # until `ray status` lists $1 active nodes (the log of the last node started if one died)
    for _ in $(seq 60); do
        [ "$("$BIN/ray" status --address "$ADDRESS" 2>/dev/null | grep -c '^ 1 node_')" -ge "$1" ] && return
        kill -0 "$HEAD_PID" 2>/dev/null || { cat "$WORK/head.log"; exit 1; }
        [ -z "$NODE_PID" ] || kill -0 "$NODE_PID" 2>/dev/null || { cat "$WORK/node.log"; exit 1; }
        sleep 2
    done
    echo "the Ray cluster at $ADDRESS did not reach $1 node(s)"; exit 1
}
wait_for_nodes 1
# The second node: `ray start --address` through .ci/ray_join_loopback.py, which lets it join with
# clusters off (every server of both nodes on 127.0.0.1; Ray alone refuses that join).
"$BIN/python" .ci/ray_join_loopback.py --address "$ADDRESS" --block --num-cpus 1 --node-ip-address 127.0.0.1 \
    >"$WORK/node.log" 2>&1 &
NODE_PID=$!
wait_for_nodes 2
echo "ray cluster of 2 nodes at $ADDRESS ($(( $(date +%s) - START )) s)"


"$BIN/skipbo" train rllib_2p output_dir="$WORK/runs" rllib.address="$ADDRESS" \
    rllib.num_env_runners=2 rllib.iterations=2 rllib.train_batch_size=1000 ppo.batch_size=128 \
    evaluation.games=10 evaluation.final_games=10 evaluation.final_opponents=[random,greedy] --no-progress \
    | tee "$WORK/rllib.log"
grep -q "ray: 2 node(s), 2 CPUs" "$WORK/rllib.log"
MODEL=$(ls "$WORK"/runs/rllib_2p-*/model.zip)
"$BIN/python" -c "import sys; from agents import load_policy; print('exported:', load_policy(sys.argv[1]))" "$MODEL"
echo "trained and exported ($(( $(date +%s) - START )) s)"

ARGS=(--agents "$MODEL" greedy --games 20 --seed 3 --engine python --no-progress)
"$BIN/skipbo" evaluate "${ARGS[@]}" --json "$WORK/local.json"
"$BIN/skipbo" evaluate "${ARGS[@]}" --ray "$ADDRESS" --json "$WORK/ray.json"
"$BIN/python" - "$WORK/local.json" "$WORK/ray.json" <<'PY'
import json, sys

local, on_ray = (json.load(open(path)) for path in sys.argv[1:])
games = [{k: v for k, v in g.items() if k != "seat_seconds"} for g in local["games"]]
assert games == [{k: v for k, v in g.items() if k != "seat_seconds"} for g in on_ray["games"]], "ray != local"
print(f"evaluate --ray matches the local run game for game ({len(games)} games)")
PY
SNES=(snes_2p rules.stock_size=5 snes.population=4 snes.deals=3 snes.generations=2 snes.curve_every=2
      snes.curve_deals=2 snes.final_deals=2)
"$BIN/skipbo" train "${SNES[@]}" output_dir="$WORK/snes-ray" ray.address="$ADDRESS" --no-progress | grep "candidate games"
"$BIN/skipbo" train "${SNES[@]}" output_dir="$WORK/snes-local" --no-progress >/dev/null
"$BIN/python" - "$WORK"/snes-ray/snes-2p-* "$WORK"/snes-local/snes-2p-* <<'PY'
import json, sys

from training.checkpoint import RunFolder

on_ray, local = (json.loads((RunFolder(run).latest_checkpoint() / "state.json").read_text()) for run in sys.argv[1:])
nodes = {node for entry in on_ray["log"] for node in entry["nodes"]}
assert len(nodes) == 2, f"the candidate games ran on {len(nodes)} node(s), not 2: {on_ray['log']}"
assert on_ray["mu"] == local["mu"] and on_ray["sigma"] == local["sigma"], "sNES on ray != in one process"
strip = lambda log: [{k: v for k, v in entry.items() if k not in ("seconds", "nodes")} for entry in log]
assert strip(on_ray["log"]) == strip(local["log"]), "sNES generations on ray != in one process"
print(f"sNES on 2 Ray nodes: {sum(sum(e['nodes'].values()) for e in on_ray['log'])} candidate tasks on both nodes, "
      "the same weights as in one process")
PY
echo "sNES on the cluster ($(( $(date +%s) - START )) s)"
NEURAL=(quickstart rules.stock_size=5 neural.teacher_games=16 neural.teacher_epochs=1 neural.games=16
        neural.generations=1 neural.chunk=4 neural.curve_games=2 neural.final_games=2 'neural.curve_opponents=[greedy]'
        neural.es_generations=1 neural.es_population=4 neural.es_games=2 'neural.es_opponents=[greedy]')
"$BIN/skipbo" train "${NEURAL[@]}" output_dir="$WORK/neural-ray" ray.address="$ADDRESS" --no-progress | grep "hands:"
"$BIN/skipbo" train "${NEURAL[@]}" output_dir="$WORK/neural-local" --no-progress >/dev/null
"$BIN/python" - "$WORK"/neural-ray/quickstart-* "$WORK"/neural-local/quickstart-* <<'PY'
import json, sys
from pathlib import Path

from training.checkpoint import RunFolder

on_ray, local = (json.loads((RunFolder(run).latest_checkpoint() / "state.json").read_text()) for run in sys.argv[1:])
nodes = {node for entry in on_ray["log"] for node in entry["nodes"]}
assert len(nodes) == 2, f"the neural hands ran on {len(nodes)} node(s), not 2: {on_ray['log']}"
weights = [{k: v for k, v in json.loads((Path(run) / "model.json").read_text()).items()
            if k in ("first", "second", "output")} for run in sys.argv[1:]]
assert weights[0] == weights[1], "the neural network trained on ray != in one process"
assert any("es_generation" in entry and entry["nodes"] for entry in on_ray["log"]), "no sNES candidate ran on Ray"
print(f"neural on 2 Ray nodes: {sum(sum(e['nodes'].values()) for e in on_ray['log'])} tasks (hands and sNES "
      "candidates) on both nodes, the same network as in one process")
PY
echo "neural on the cluster ($(( $(date +%s) - START )) s)"
echo "ray smoke test passed in $(( $(date +%s) - START )) s"
