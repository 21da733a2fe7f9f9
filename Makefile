# fabricsim: `make demo` and `make test` install what is missing, then run.
#
# They install into a project virtual environment, .venv (created with `python3 -m venv`),
# because system Pythons (Debian, Ubuntu) refuse global installs; inside an active virtual
# environment, or with PYTHON=... given, they use that Python instead.
ifeq ($(origin PYTHON),undefined)
  ifdef VIRTUAL_ENV
    PYTHON := python3
  else
    PYTHON := .venv/bin/python
  endif
endif
VENV := $(filter .venv/bin/python,$(PYTHON))
PIP := $(PYTHON) -m pip
FABRICSIM := $(PYTHON) -m fabricsim
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export PIP_ROOT_USER_ACTION := ignore

.PHONY: install install-core demo test test-rust test-python reproduce bench bench-contended bench-core lint fuzz fuzz-core clean

.venv/bin/python:
	@echo "fabricsim: creating the project's virtual environment in .venv"
	@python3 -m venv .venv || { rm -rf .venv; echo "error: 'python3 -m venv' failed. On Debian/Ubuntu: sudo apt install python3-venv; or activate any virtual environment and run make again." >&2; exit 1; }
	@.venv/bin/python -m pip install -q --upgrade pip

## install-core: the package alone (what the demo needs), the Rust core built into it, editable;
## install: with the test tools, Ray (sweeps on a cluster) and MPI (runs across processes), for their tests.
## The build runs without isolation (maturin from the same environment, no second download), so
## maturin's build hook calls `maturin` by name: the environment's scripts directory goes first
## on PATH for that step, since nothing has activated the environment (issue 45).
install-core: EXTRAS :=
install: EXTRAS := [test,ray,mpi]
## A second install with nothing changed (no Rust source, manifest or pyproject.toml newer than
## the last install into this Python with these extras; Python sources are editable) says so
## in one line instead of reinstalling.
install install-core: $(VENV)
	@stamp="target/.installed-$$(printf '%s %s' '$(PYTHON)' '$(EXTRAS)' | cksum | cut -d' ' -f1)"; \
	if [ -f "$$stamp" ] && $(PYTHON) -c 'import fabricsim._core' 2>/dev/null \
	  && [ -z "$$(find crates Cargo.toml Cargo.lock pyproject.toml -newer "$$stamp" -not -path '*/target/*' 2>/dev/null | head -n 1)" ]; then \
	  echo "fabricsim: '.$(EXTRAS)' is installed in $(PYTHON) and up to date"; exit 0; fi; \
	echo "fabricsim: installing '.$(EXTRAS)' into $(PYTHON); the first time takes a minute or two (a release build of the Rust core)"; \
	set -e; \
	$(PIP) install -q --progress-bar off "maturin>=1.7,<2"; \
	PATH="$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$$PATH" \
	  $(PIP) install -q --progress-bar off --no-build-isolation -e '.$(EXTRAS)'; \
	mkdir -p target; touch "$$stamp"

## The README's demo: ECMP vs oblivious spraying on a 128-host permutation.
demo: install-core
	$(FABRICSIM) compare scenarios/permutation_128.toml --lb ecmp,ops
	@$(if $(VENV),echo "fabricsim: the CLI is .venv/bin/fabricsim (or: . .venv/bin/activate; fabricsim --help)",true)

## Every Rust and Python test.
test: install test-rust test-python

test-rust:
	cargo test -p fabricsim-core
	cargo test -p fabricsim-c

test-python:
	$(PYTHON) -m pytest --doctest-modules tests python/fabricsim

## The source papers' experiments, full size (docs/reproduction.md; not in CI).
reproduce: install
	$(FABRICSIM) reproduce --all

## The standard performance scenarios (docs/performance.md).
bench: install
	$(FABRICSIM) bench

## The 128- and 1024-host permutations on 1, 2 and auto threads while busy loops hold every
## CPU (docs/performance.md, "Threads on a busy machine").
bench-contended: install
	$(FABRICSIM) bench --contended

## The same 1024-host benchmark without Python.
bench-core:
	cargo run --release -p fabricsim-core --example bench1024 ops

## Hostile input at scale (not in CI): 10 000 random single-field corruptions of a scenario,
## and the model's invariants over 10 000 random valid scenarios of each family (fat trees with
## every algorithm and fault; jobs and traces; every topology kind and file format).
fuzz: install
	FABRICSIM_FUZZ_EXAMPLES=10000 FABRICSIM_PROPERTY_EXAMPLES=10000 $(PYTHON) -m pytest -q \
		tests/test_hostile_properties.py tests/test_properties.py tests/test_fabric_properties.py --hypothesis-show-statistics

## libFuzzer on the scenario parser and validator (not in CI; nightly Rust and cargo-fuzz,
## installed if missing). FUZZ_SECONDS=300 by default; crashes land in fuzz/artifacts/.
FUZZ_SECONDS ?= 300
fuzz-core:
	rustup toolchain list | grep -q nightly || rustup toolchain install nightly --profile minimal
	command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
	mkdir -p fuzz/corpus/scenario
	cp crates/fabricsim-core/tests/golden/*.toml scenarios/*.toml fuzz/corpus/scenario/
	cd fuzz && cargo +nightly fuzz run scenario corpus/scenario -- -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -rss_limit_mb=4096

## Formatting, lints and types (CI runs this before the tests).
lint: install
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc -q -p fabricsim-core --no-deps
	$(PYTHON) -m ruff check python tests tools
	$(PYTHON) -m ruff format --check python tests tools
	$(PYTHON) -m mypy --strict python/

clean:
	cargo clean
	rm -rf python/fabricsim/_core*.so .pytest_cache .venv
