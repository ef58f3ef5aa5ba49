"""A profile of the user's run joined with a command's reports (judge.profile), when the run's
`profile` setting names one; and the gate's time rule, `time_share_bound`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import KernelReport
from ..settings import Settings

if TYPE_CHECKING:  # the profile's reader and join load when a run names a profile, not at every start
    from ..judge.audit import AuditResult
    from ..judge.profile import ProfileJoin


def profiled(config: Settings, reports: list[KernelReport] | list[dict]) -> ProfileJoin | None:
    """The reports joined with the run's profile, or None without one."""
    if not config.profile:
        return None
    from ..inputs.profile import read_profile
    from ..judge.profile import join

    return join(read_profile(config.profile), reports)


def apply_time_share(result: AuditResult, joined: ProfileJoin | None, config: Settings) -> None:
    """The gate's time rule, when asked for (time_share_bound with a profile): judge.profile."""
    if config.time_share_bound is None:
        return
    if joined is None:
        from ..errors import UsageError

        raise UsageError("time_share_bound needs a profile (--profile TRACE, or `profile:` in the gate configuration)")
    from ..judge.profile import time_share_rule

    result.judgements, _ = time_share_rule(result.judgements, joined, config.time_share_bound)
