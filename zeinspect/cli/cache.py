"""`cache stats` and `cache prune`: the build cache's local and shared levels."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click

from ..errors import EXIT_OK
from .common import cache_url_options, cli, write


@cli.group()
def cache() -> None:
    """Measure and trim the build cache (local, and shared with --cache-url)."""


def _url_options(f: Callable) -> Callable:
    for option in reversed(cache_url_options()):
        f = option(f)
    return f


def _settings(cache_url: str | None, cache_readonly: bool) -> Any:
    """The shared store the options name, else the environment's ($ZEINSPECT_CACHE_URL)."""
    from ..app.gate import settings

    return settings({"cache_url": cache_url, "cache_readonly": cache_readonly or None})


@cache.command("stats")
@_url_options
@click.option("--json", "as_json", is_flag=True)
def cache_stats(cache_url: str | None, cache_readonly: bool, as_json: bool) -> None:
    """Show the entries and bytes of each level."""
    from ..app import cache as cache_app

    got = cache_app.stats(_settings(cache_url, cache_readonly).cache_url)
    write(json.dumps([lv.to_json() for lv in got.levels], indent=1) + "\n" if as_json else cache_app.text(got))
    sys.exit(EXIT_OK)


@cache.command("prune")
@_url_options
@click.option("--older-than", "older_than", type=click.FloatRange(0, None), default=None, metavar="DAYS",
              help="Remove entries written more than this many days ago.")
@click.option("--max-size", default=None, metavar="SIZE", help="Then remove the oldest until the rest fits (500M, 2G).")
@click.option("--json", "as_json", is_flag=True)
def cache_prune(cache_url: str | None, cache_readonly: bool, older_than: float | None, max_size: str | None,
                as_json: bool) -> None:
    """Remove old entries from each level (the shared one unless --cache-url-readonly)."""
    from ..app import cache as cache_app

    chosen = _settings(cache_url, cache_readonly)
    got = cache_app.prune(chosen.cache_url, older_than_days=older_than, max_size=max_size,
                          readonly=chosen.cache_readonly)
    write(json.dumps([lv.to_json() for lv in got.levels], indent=1) + "\n" if as_json else cache_app.text(got))
    sys.exit(EXIT_OK)
