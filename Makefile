# The two set-up commands of the README. Each creates .venv and installs what it needs, torch first:
# torch==2.13.0 from the PyTorch CPU wheel index (download.pytorch.org/whl/cpu), falling back to the
# configured index when that one is out of reach (on Linux, PyPI's torch is the multi-GB CUDA build), and it
# says which build it got.
TORCH := torch==2.13.0
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu
# $(call install_torch,PYTHON): the CPU build where the PyTorch index answers, else the configured index's
define install_torch
	$(1) -m pip install -q --retries 0 --timeout 30 --index-url $(TORCH_CPU_INDEX) $(TORCH) 2>/dev/null \
		|| { echo "$(TORCH_CPU_INDEX) is out of reach: $(TORCH) from the configured index"; \
		     $(1) -m pip install -q $(TORCH); }
	$(1) -W ignore -c "import torch; print('installed torch', torch.__version__, '(CUDA ' + torch.version.cuda + ' build)' if torch.version.cuda else '(CPU build)')"
endef

VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

RLLIB_VENV := .venv-rllib
RLLIB_STAMP := $(RLLIB_VENV)/.installed

.PHONY: train test lint wheel-smoke test-rllib bench clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(call install_torch,$(PY))
	$(PY) -m pip install -q -e '.[dev,web]'
	touch $(STAMP)

# The RLlib environment: ray[rllib] pins an older gymnasium, so it gets a venv of its own.
$(RLLIB_STAMP): pyproject.toml
	python3 -m venv $(RLLIB_VENV)
	$(RLLIB_VENV)/bin/python -m pip install -q --upgrade pip
	$(call install_torch,$(RLLIB_VENV)/bin/python)
	$(RLLIB_VENV)/bin/python -m pip install -q -e '.[dev,web,rllib]'
	touch $(RLLIB_STAMP)

# `make .venv`: the environment alone (`source .venv/bin/activate` then puts `skipbo` on the PATH)
$(VENV): $(STAMP)
	@:

train: $(STAMP)
	$(VENV)/bin/skipbo train quickstart

# worksteal: a worker that runs out takes queued tests from the other, so the few long ones (the cold-compile
# benchmark, the checkpoint kill test) do not leave one core idle at the end
test: $(STAMP)
	$(PY) -m pytest -n 2 --dist worksteal

# ruff's rules are in pyproject.toml ([tool.ruff]).
lint: $(STAMP)
	$(VENV)/bin/ruff check .

# The wheel, installed in a clean venv and run outside the checkout (.ci/wheel_smoke.sh).
wheel-smoke: $(STAMP)
	.ci/wheel_smoke.sh $(PY)

# The RLlib environment differs from $(VENV) in gymnasium (1.2.2, ray[rllib]'s pin), Ray and the
# packages Ray brings: test-rllib runs the tests of the code that uses them (the environments, SB3
# and RLlib training, `skipbo benchmark --ray` against one process, the examples, the notebook, the CLI's train and import-sb3, a Ray address that is
# no Ray head, rllib_speed at a tiny size), one file per xdist worker (each file of tests/rllib starts its own Ray instances), then a real Ray cluster of
# two nodes on 127.0.0.1 (.ci/rllib_smoke.sh: RLlib training, evaluate --ray, sNES candidate games
# on both nodes). `make test-rllib RLLIB_TESTS=tests RLLIB_SKIP=` runs the whole suite there.
RLLIB_TESTS ?= tests/rllib tests/envs tests/training tests/examples tests/test_notebook.py \
	tests/cli/test_cli.py tests/cli/test_import_sb3.py tests/evaluation/test_ray_address.py \
	"tests/benchmarks/test_scripts.py::test_a_script_runs_at_a_tiny_size[benchmarks/rllib_speed.py]"
# the training tests of code that imports neither gymnasium, SB3 nor Ray (sNES checkpoints, the neural and
# td backends, the value fits) run in `make test` only; their Ray runs are in tests/rllib
RLLIB_SKIP ?= $(addprefix --ignore=tests/training/,test_checkpoints.py test_neural_training.py \
	test_td_backend.py test_td_learner.py test_td_residual.py test_teacher_lists.py test_value_fit.py)
test-rllib: $(RLLIB_STAMP)
	$(RLLIB_VENV)/bin/python -m pytest -n 2 --dist loadfile $(RLLIB_SKIP) $(RLLIB_TESTS)
	.ci/rllib_smoke.sh

bench: $(STAMP)
	$(PY) benchmarks/engine_speed.py

clean:
	rm -rf $(VENV) $(RLLIB_VENV) runs
