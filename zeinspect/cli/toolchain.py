"""`toolchain list` and `toolchain fetch`: the compilers zeinspect runs."""

from __future__ import annotations

import click

from .common import cli, finish, show


@cli.group()
def toolchain() -> None:
    """List and fetch Intel GPU compilers."""


@toolchain.command("list")
@click.option("--json", "as_json", is_flag=True)
def toolchain_list(as_json: bool) -> None:
    """Show each compiler found: path, ocloc and IGC versions, known targets."""
    from ..app.toolchain import listing
    from ..formats.writers import TOOLCHAIN

    got = listing()
    show(TOOLCHAIN, got, as_json)
    finish(got)


@toolchain.command("fetch")
@click.option("--force", is_flag=True, help="Fetch again even if this version is present.")
def toolchain_fetch(force: bool) -> None:
    """Fetch the current Intel compiler stack from Debian unstable into the user cache."""
    from ..app.toolchain import fetch

    finish(fetch(force=force, progress=lambda msg: click.echo(msg, err=True)))


