#!/usr/bin/env bash
# CI, packaging part: build the wheel, install it in a clean venv (the CPU build of torch pinned first) and
# run it from a folder outside the checkout, so nothing can come from the repository: `skipbo --help`, a short
# `skipbo evaluate`, the shipped configs (`skipbo train --list-configs`: configs/ installed as training/configs/)
# and a tiny real `skipbo train ppo_2p` (SB3 PPO: 64 steps, an export and a final evaluation; the overrides keep
# every player in Python, so no numba kernel is compiled and the run takes seconds). Usage: .ci/wheel_smoke.sh [PYTHON]
# (PYTHON builds the wheel and needs the `build` package: the dev extra has it; default .venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${1:-.venv/bin/python}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# built from a copy of the files git tracks, so nothing untracked can slip into the wheel and no build/ is left here
git ls-files -z | tar --null -T - -cf - | (mkdir "$WORK/src" && tar -xf - -C "$WORK/src")
"$PYTHON" -m build --wheel --outdir "$WORK/dist" "$WORK/src" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; exit 1; }
WHEEL=$(ls "$WORK"/dist/skipbo_lab-*.whl)
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q --upgrade pip
# the CPU build as the Makefile installs it: the PyTorch CPU index first, the configured index where it is out of reach
"$WORK/venv/bin/python" -m pip install -q --retries 0 --timeout 30 --index-url https://download.pytorch.org/whl/cpu \
    torch==2.13.0 2>/dev/null || "$WORK/venv/bin/python" -m pip install -q torch==2.13.0
"$WORK/venv/bin/python" -m pip install -q "$WHEEL"
BIN="$WORK/venv/bin"

cd "$WORK"  # no checkout here: configs, bots and models must come from the installed package
export NUMBA_CACHE_DIR="$WORK/numba"
"$BIN/skipbo" --help >/dev/null
"$BIN/skipbo" evaluate --agents greedy random --games 4 --engine python --seed 0
"$BIN/skipbo" train --list-configs | grep "^quickstart " >/dev/null
"$BIN/skipbo" train --no-progress ppo_2p output_dir="$WORK/runs" env.vec_env=dummy env.num_envs=2 \
    'opponents.mix={snapshots: 1.0}' 'network.hidden=[16]' ppo.n_steps=32 ppo.batch_size=32 ppo.n_epochs=1 \
    pretrain.enabled=false budget.total_timesteps=64 evaluation.every_steps=1000000 checkpoint.every_steps=1000000 \
    evaluation.games=2 evaluation.final_games=2 budget.target_opponent=agents.random_bot:RandomBot \
    'evaluation.opponents=[agents.random_bot:RandomBot]' 'evaluation.final_opponents=[agents.random_bot:RandomBot]'
test -s "$(ls -d "$WORK"/runs/ppo-2p-*)/model.zip"
"$BIN/python" - <<'PY'
import pathlib, training.config
assert pathlib.Path(training.config.__file__).resolve().is_relative_to(pathlib.Path.cwd()), training.config.__file__
shipped = training.config.shipped_configs()  # the repository's configs/, installed as training/configs/
assert shipped["quickstart"].parent == pathlib.Path(training.config.__file__).resolve().parent / "configs", shipped
assert training.config.config_path("learned_2p") == shipped["snes_2p"]  # an old name still names its config
print("wheel smoke: ok, the package ran from", pathlib.Path(training.config.__file__).parent)
PY
