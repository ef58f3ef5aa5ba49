"""`toolchain list` and `toolchain fetch`: the compilers zeinspect runs."""

from __future__ import annotations

import sys

import click

from ..errors import EXIT_OK, EXIT_TOOLCHAIN
from .common import _write, cli


@cli.group()
def toolchain() -> None:
    """List and fetch Intel GPU compilers."""


@toolchain.command("list")
@click.option("--json", "as_json", is_flag=True)
def toolchain_list(as_json: bool) -> None:
    """Show each compiler found: path, ocloc and IGC versions, known targets."""
    from ..formats import toolchain as toolchain_fmt
    from ..toolchain.compilers import discover_report
    from ..toolchain.knowledge import has_multi

    found = discover_report()
    multi = {c.id: has_multi(c) for c, _ in found if c is not None}
    _write(toolchain_fmt.dumps(found, multi) if as_json else toolchain_fmt.text(found, multi))
    sys.exit(EXIT_OK if any(c for c, _ in found) else EXIT_TOOLCHAIN)


@toolchain.command("fetch")
@click.option("--force", is_flag=True, help="Fetch again even if this version is present.")
def toolchain_fetch(force: bool) -> None:
    """Fetch the current Intel compiler stack from Debian unstable into the user cache."""
    from ..toolchain.fetch import fetch

    fetch(force=force, progress=lambda msg: click.echo(msg, err=True))


