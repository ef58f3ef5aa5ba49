"""What `zeinspect triton` was asked: one of the four ways in, the settings, and what to do beyond
the build (triton.app.request makes one from the command line's options)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...settings import Settings
from .kernel import TritonKernel


@dataclass(frozen=True)
class Asked:
    """What a screen of one kernel was asked beyond its build as compiled."""

    autotune: bool = False
    """Every config of its @triton.autotune, each judged."""
    fix: bool = False
    """With `autotune`, `--run` or `--from-cache`: the Triton levers searched for each config or
    specialization with a finding."""
    stage: bool = False
    """Built again with the SLM staging pass."""
    explain: bool = False
    """Which Python lines spill."""
    artifacts: Path | None = None
    """Where to keep the TTGIR and SPIR-V of each build."""
    records: str | None = None
    """With `fix` on `--run` or `--from-cache`: where the records go, and are read back from."""
    ratchet_to: str | None = None
    """With `fix` on `--run` or `--from-cache`: the ratchet file the lines for what no lever cleans are added to."""


class Way(enum.StrEnum):
    """The four ways a Triton kernel comes in."""

    KERNEL = "kernel"
    """FILE.py:KERNEL: one kernel, as compiled (and staged), or every config of its autotune."""
    MODULE = "module"
    """FILE.py or DIR: every kernel the modules' own code launches, with its values."""
    RUN = "run"
    """-- CMD ARGS: every kernel the command launches, as Triton specialized it."""
    CACHE = "cache"
    """--from-cache DIR: every kernel a Triton cache holds, with the options it was built with."""


@dataclass(frozen=True)
class TritonRequest:
    way: Way
    settings: Settings
    kernel: TritonKernel | None = None
    """KERNEL and MODULE: what to build (MODULE: the options and values every kernel is given)."""
    command: tuple[str, ...] = ()
    """RUN: the command to run; CACHE: the cache folder."""
    asked: Asked = Asked()
    """KERNEL: what else to do than build it; RUN and CACHE: `stage` alone."""
    list_only: bool = False
    run_timeout: float | None = None
    launch: Mapping[str, Any] | None = None
    """RUN and CACHE: the launch options given (the Triton levers' values), set on every specialization."""
