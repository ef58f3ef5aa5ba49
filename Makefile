# The two commands of the README: `make audit` (the project's pre-merge gate on kernels/)
# and `make test` (the test suite).  Both set up everything they need first.
.PHONY: audit test slow unit check docs setup setup-python bench fuzz

setup:
	./scripts/setup.sh

setup-python:
	./scripts/setup.sh --python-only

# The gate's verdicts on the terminal; the HTML report and SARIF for people and CI beside them.
audit: setup
	.venv/bin/zeinspect audit --config ratchet/gate.yaml --html build/audit.html --sarif build/audit.sarif

# Both tiers and the quality checks.  `make unit`: the pure tier alone, in seconds.
# Two worker processes, a test module per worker at a time (--dist loadfile keeps each
# module's fixtures in one process): about half the wall time on 2 cores (README, Performance).
# The longest modules start first (tests/conftest.py LONG_FIRST; --no-loadscope-reorder keeps
# that order instead of xdist's, by number of tests).
# The tests of real libraries and real runs' caches at full scale (`slow`: oneMKL, vLLM, Open3D, xpu-kernels,
# Liger-Kernel, the GPT-2 step's Inductor cache) run in `make slow`, which CI runs after `make
# test` (.ci/run): the default run stays under ten minutes on 2 cores (README, Performance).
# The tests' processes write the bytecode they compile to build/pycache, even where the
# environment sets PYTHONDONTWRITEBYTECODE (as this build machine does): the CPU torch the Triton
# tests' commands import was installed without bytecode (pip --no-compile, scripts/setup.sh), and
# every `import torch` then compiled it from source again, 3.9 s instead of 1.9 s (with Triton),
# in dozens of processes.  Nothing is written beside the sources.
TEST_ENV = ZEINSPECT_REQUIRE_TOOLCHAINS=1 PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(CURDIR)/build/pycache

test: setup check docs
	$(TEST_ENV) .venv/bin/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder -m "not slow"

slow: setup
	$(TEST_ENV) .venv/bin/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder -m slow

unit: setup-python
	.venv/bin/python -m pytest -q tests/unit

# The documentation site (MkDocs, docs/ and mkdocs.yml) into build/site, strictly: a broken
# link, a missing page or a stale reference fails (and so fails `make test`).
docs: setup-python
	NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet

check: setup-python
	.venv/bin/ruff check zeinspect tests bench scripts
	.venv/bin/mypy

bench: setup
	.venv/bin/python bench/run.py
