# The two commands of the README: `make audit` (the project's pre-merge gate on kernels/)
# and `make test` (the test suite).  Both set up everything they need first.
.PHONY: audit test setup bench fuzz

setup:
	./scripts/setup.sh

audit: setup
	.venv/bin/zeinspect audit --config ratchet/gate.yaml

test: setup
	ZEINSPECT_REQUIRE_TOOLCHAINS=1 .venv/bin/python -m pytest -q

bench: setup
	.venv/bin/python bench/run.py
