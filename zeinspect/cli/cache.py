"""`cache stats` and `cache prune`: the build cache's local and shared levels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from .common import cli, finish, given_settings, setting_options, show


@cli.group()
def cache() -> None:
    """Measure and trim the build cache (local, and shared with --cache-url)."""


_OPTIONS, _READ = setting_options("cache")


def _url_options(f: Callable) -> Callable:
    for option in reversed(_OPTIONS):
        f = option(f)
    return f


def _settings(kwargs: dict) -> Any:
    """The shared store the options name, else the environment's ($ZEINSPECT_CACHE_URL)."""
    from ..app.gate import settings

    return settings(given_settings(kwargs, _READ))


@cache.command("stats")
@_url_options
@click.option("--json", "as_json", is_flag=True)
def cache_stats(as_json: bool, **url: Any) -> None:
    """Show the entries and bytes of each level."""
    from ..app import cache as cache_app
    from ..formats.writers import CACHE

    got = cache_app.stats(_settings(url).cache_url)
    show(CACHE, got, as_json)
    finish(got)


@cache.command("prune")
@_url_options
@click.option("--older-than", "older_than", type=click.FloatRange(0, None), default=None, metavar="DAYS",
              help="Remove entries written more than this many days ago.")
@click.option("--max-size", default=None, metavar="SIZE", help="Then remove the oldest until the rest fits (500M, 2G).")
@click.option("--json", "as_json", is_flag=True)
def cache_prune(older_than: float | None, max_size: str | None, as_json: bool, **url: Any) -> None:
    """Remove old entries from each level (the shared one unless --cache-url-readonly)."""
    from ..app import cache as cache_app
    from ..formats.writers import CACHE

    chosen = _settings(url)
    got = cache_app.prune(chosen.cache_url, older_than_days=older_than, max_size=max_size,
                          readonly=chosen.cache_readonly)
    show(CACHE, got, as_json)
    finish(got)
