#!/bin/sh
# Install what `make audit` and `make test` need, from nothing, on Debian 12; re-runs are cheap.
#  1. Debian packages that are missing (Debian 12's Intel compiler stack, Level Zero, SPIR-V
#     and LLVM offload tools, binutils, Python venv support, git for the pre-commit test,
#     Chromium and its driver for the HTML report's browser test);
#  2. the current Intel compiler stack from Debian unstable (`zeinspect toolchain fetch`);
#  3. a .venv in the repository root with zeinspect installed (editable) and its test extras.
# With --python-only, step 2 is skipped (`make unit` needs no compiler).
set -eu
PYTHON_ONLY=0
[ "${1:-}" = "--python-only" ] && PYTHON_ONLY=1
cd "$(dirname "$0")/.."

PACKAGES="intel-opencl-icd ocl-icd-libopencl1 libze1 libze-dev spirv-tools clang-tools-15 binutils gcc g++ make
          python3 python3-venv python3-dev zstd ca-certificates procps git chromium chromium-driver
          libusb-1.0-0"
missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  echo "setup: installing Debian packages:$missing"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
fi

PY=$(command -v python3.11 || command -v python3)
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $PY"
  "$PY" -m venv .venv
fi
if [ ! -f .venv/.installed ] || [ pyproject.toml -nt .venv/.installed ]; then
  echo "setup: installing zeinspect into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  # compat: a plain path in a .pth file, not setuptools' import-hook finder, which costs about
  # 30 ms on every start of every command (`zeinspect --version` is Python's start-up otherwise).
  # --no-compile: pip byte-compiles every module of every package it installs (Triton's, Dask's,
  # MkDocs'), most of which nothing here imports: 79 s of a fresh clone's set-up against 39 s
  # without.  Python compiles what is imported, once, on first use.
  .venv/bin/python -m pip install -q --no-compile -e '.[test]' --config-settings editable_mode=compat
  touch .venv/.installed
fi
# The Level Zero binding (cffi, out-of-line): an editable install does not carry the
# generated module, so generate it into the tree (zeinspect/_ze.py, ignored by git).
if [ ! -f zeinspect/_ze.py ] || [ native/ze_build.py -nt zeinspect/_ze.py ]; then
  .venv/bin/python native/ze_build.py
fi

# Byte-compile once what every command imports (zeinspect and its run-time dependencies):
# start-up matters for a tool run on every commit, and some environments set
# PYTHONDONTWRITEBYTECODE, which would make every run compile the sources again.
.venv/bin/python scripts/byte_compile.py || true

# A CPU build of torch beside the .venv, not in it (the rest of the suite tests zeinspect without
# torch, as most users of `zeinspect triton FILE.py` run it): `triton --run`'s tests run a real
# library's own code on CPU tensors with it on their PYTHONPATH.  pip takes the CPU build the
# machine's pip configuration offers for this exact version.
if [ "$PYTHON_ONLY" = 0 ] && [ ! -d build/torch-cpu/torch ]; then
  echo "setup: installing a CPU build of torch into build/torch-cpu"
  rm -rf build/torch-cpu.part
  .venv/bin/python -m pip install -q --no-compile --target build/torch-cpu.part torch==2.13.0 && mv build/torch-cpu.part build/torch-cpu
fi

# The current stack moves: fetch checks Debian unstable and installs what it carries today.
[ "$PYTHON_ONLY" = 1 ] || .venv/bin/zeinspect toolchain fetch
