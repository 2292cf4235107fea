# The two commands that matter (see README): `make demo` and `make test`.
# Each creates .venv, installs what it needs from this project's files, builds, runs.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The `test` extra (pytest, nbclient, pdoc, ...): installed only for the targets that need it, so `make demo` does not wait for it.
TEST_STAMP := $(VENV)/.installed-test
SOURCES := $(shell find crates python -name '*.rs' -o -name '*.py' -o -name '*.toml' -o -name '*.pyi') Cargo.toml pyproject.toml

.PHONY: demo test build bench cargo-test pytest repro-check clean config-reference readme-scores nbd-clients notebooks api-docs pgo-flags

# Every cargo build here is optimized with a profile of the simulator's own runs (PGO; tools/pgo_profile.py
# writes pgo/disksched.profdata.xz and the LLVM version that wrote it; docs/performance.md, "Profile-guided
# build"). The file is named by its content, so a new profile changes RUSTFLAGS and cargo rebuilds with it.
# An older LLVM cannot read a newer profile's format: with such a rustc the build goes on without it (the same
# results, slower).
RUSTC_LLVM := $(shell rustc -vV 2>/dev/null | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
PGO_LLVM := $(shell cat pgo/llvm-version)
ifeq ($(shell test "$(RUSTC_LLVM)" -ge "$(PGO_LLVM)" 2>/dev/null && echo yes),yes)
PGO := $(abspath target/pgo/$(shell sha256sum pgo/disksched.profdata.xz | cut -c1-16).profdata)
# Replacing any profile flag already there: a make run under `make test` (tests/test_pgo.py) inherits this one.
export RUSTFLAGS := $(strip $(filter-out -Cprofile-use=%,$(RUSTFLAGS)) -Cprofile-use=$(PGO))
else
$(info rustc's LLVM ($(RUSTC_LLVM)) is older than the profile's ($(PGO_LLVM)): building without profile-guided optimization)
endif

$(PGO): pgo/disksched.profdata.xz
	@mkdir -p $(dir $@)
	$(PYTHON) -c "import lzma, pathlib, sys; pathlib.Path(sys.argv[2]).write_bytes(lzma.open(sys.argv[1]).read())" $< $@.part
	mv $@.part $@

# The flags the release build uses (tools/callgrind_bench.py builds the `quick` example with them).
pgo-flags: $(PGO)
	@echo $(RUSTFLAGS)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# pip installs the package's dependencies while cargo compiles the extension (the compile's last minute uses one of
# two cores), with the environment maturin gives cargo (the interpreter's signature: "cpython-3.11-64bit"), so
# maturin develop then finds both done.
$(STAMP): $(VENV)/bin/python $(SOURCES) $(PGO)
	$(PY) tools/extra_requirements.py --base > $(VENV)/requirements.txt 2>/dev/null || : > $(VENV)/requirements.txt  # (no tomllib before 3.11: maturin installs them)
	$(PY) -m pip install --quiet "maturin>=1.5,<2" -r $(VENV)/requirements.txt & pip=$$!; \
	  sig=$$($(PY) -c "import platform, struct, sys; print('%s-%d.%d-%dbit' % (platform.python_implementation().lower(), *sys.version_info[:2], struct.calcsize('P') * 8))"); \
	  VIRTUAL_ENV=$(abspath $(VENV)) PYO3_PYTHON=$(abspath $(PY)) PYO3_ENVIRONMENT_SIGNATURE=$$sig \
	    cargo build --release --quiet -p disksched-py --features pyo3/extension-module; cargo=$$?; \
	  wait $$pip && [ $$cargo = 0 ]
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --quiet
	touch $(STAMP)

$(TEST_STAMP): $(STAMP) pyproject.toml
	$(PY) tools/extra_requirements.py test > $(VENV)/test-requirements.txt
	$(PY) -m pip install --quiet -r $(VENV)/test-requirements.txt
	touch $(TEST_STAMP)

build: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/disksched demo --out out/demo

bench: $(STAMP)
	$(VENV)/bin/disksched bench

# FUZZ_CASES: inputs per fuzz target (tests/fuzz.rs; docs/fuzzing.md); plain cargo test runs 64.
cargo-test: $(PGO)
	FUZZ_CASES=20000 cargo test -p disksched-core --release

# The real NBD clients tests/test_serve.py runs against `disksched serve` (Debian packages; installed as root when missing).
nbd-clients:
	@command -v fio >/dev/null && command -v nbdinfo >/dev/null && command -v nbdcopy >/dev/null || \
	  { [ "$$(id -u)" = 0 ] || { echo "fio, nbdinfo, nbdcopy missing: run 'apt-get install -y fio libnbd-bin' as root"; exit 1; }; \
	    apt-get install -y fio libnbd-bin || { apt-get update && apt-get install -y fio libnbd-bin; }; }

pytest: $(TEST_STAMP) nbd-clients
	$(PY) -m pytest -q

# Every paper reproduction, quick, judged and ablated: fails when a claim the baseline says holds does not, or cannot fail.
repro-check: $(STAMP)
	$(VENV)/bin/disksched reproduce all --quick --ablate --check --out out/repro-quick

test: cargo-test pytest repro-check

# docs/config.md is generated from the declared schema (a test fails when it is stale).
config-reference: $(STAMP)
	$(VENV)/bin/disksched config reference > docs/config.md

# README's table of reproduction scores, from docs/reproductions/*.json (a test fails when it is stale).
readme-scores: $(STAMP)
	$(PY) -m disksched.reproductions.scores README.md docs/reproductions

# examples/*.ipynb executed again, outputs stored (tests/test_notebook.py executes them in `make test`).
notebooks: $(TEST_STAMP)
	$(PY) tools/execute_notebook.py --write examples/*.ipynb

# The Python API reference from the docstrings (pdoc): docs/api/index.html (tests/test_api_docs.py builds it too).
API_MODULES := disksched disksched.plugins
api-docs: $(TEST_STAMP)
	$(PY) -m pdoc $(API_MODULES) -o docs/api

clean:
	rm -rf $(VENV) target out
