#!/usr/bin/env bash
# CI, RLlib part: a real local Ray cluster bound to 127.0.0.1, `skipbo train rllib_2p`
# against it for 2 iterations with 2 env runners, the exported policy loaded and evaluated
# locally and with `skipbo evaluate --ray` on the cluster (the two must agree), then the cluster
# is stopped, on failure too. Only the cluster this script started is stopped (its `ray start
# --block` process ends the processes it started); other Ray instances on the machine are untouched.
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

"$BIN/ray" start --head --block --num-cpus 2 --node-ip-address 127.0.0.1 --port "$PORT" --include-dashboard false \
    --temp-dir "$WORK/ray" >"$WORK/ray.log" 2>&1 &
RAY_PID=$!
stop_cluster() {  # the --block process stops what it started
    kill "$RAY_PID" 2>/dev/null && wait "$RAY_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap stop_cluster EXIT
trap 'exit 130' INT TERM

for _ in $(seq 60); do
    "$BIN/ray" status --address "$ADDRESS" >/dev/null 2>&1 && break
    kill -0 "$RAY_PID" 2>/dev/null || { cat "$WORK/ray.log"; exit 1; }
    sleep 2
done
"$BIN/ray" status --address "$ADDRESS" >/dev/null
echo "ray cluster at $ADDRESS ($(( $(date +%s) - START )) s)"

"$BIN/skipbo" train rllib_2p output_dir="$WORK/runs" rllib.address="$ADDRESS" \
    rllib.num_env_runners=2 rllib.iterations=2 rllib.train_batch_size=1000 ppo.batch_size=128 \
    evaluation.games=10 evaluation.final_games=10 evaluation.final_opponents=[random,greedy] --no-progress
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
echo "rllib smoke test passed in $(( $(date +%s) - START )) s"
