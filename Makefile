# The two set-up commands of the README. Each creates .venv and installs what it needs;
# the CPU build of torch is pinned first so no multi-GB CUDA build is pulled in.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: train test bench clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev,web]'
	touch $(STAMP)

train: $(STAMP)
	$(VENV)/bin/skipbo train configs/quickstart.yaml

test: $(STAMP)
	$(PY) -m pytest -n 2

bench: $(STAMP)
	$(PY) benchmarks/engine_speed.py

clean:
	rm -rf $(VENV) runs
