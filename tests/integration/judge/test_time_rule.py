"""The gate's time rule on real compiles: with a profile and `time_share_bound`, new or grown
scratch users pass while together they cover at most that share of the profiled GPU time
(judge.profile), and a change that makes a hot kernel use scratch fails the gate.

The hot kernel is the corpus's private histogram (kernels/private_array.cl).  Left to choose
its sub-group size, IGC keeps its array in registers; the change is the source line that
requires SIMD32, which puts the array in scratch on Xe-LP.  The cold kernel is the corpus's
SIMD32 accumulator, which spills there.
"""

from __future__ import annotations

import json

from conftest import KERNELS

BOUND = 15.0
SHARES = {"private_histogram": 90.0, "sg32_accumulate": 10.0}
REQUIRED = "__attribute__((intel_reqd_sub_group_size(32)))"


def _project(tmp_path, compiler_id, *, required: bool, rule: bool = True):
    source = (KERNELS / "private_array.cl").read_text()
    assert REQUIRED in source
    (tmp_path / "hot.cl").write_text(source if required else source.replace(REQUIRED, ""))
    (tmp_path / "profile.csv").write_text("kernel,time\n" + "".join(f"{k},{v}\n" for k, v in SHARES.items()))
    (tmp_path / "scratch_ratchet.txt").write_text("")
    (tmp_path / "gate.yaml").write_text(
        f"targets: [tgllp]\nratchet: scratch_ratchet.txt\ncompiler: {compiler_id}\n"
        f"inputs: [hot.cl, {KERNELS / 'sg32_accumulate.cl'}]\n"
        + (f"profile: profile.csv\ntime_share_bound: {BOUND}\n" if rule else ""))


def _audit(cli, tmp_path):
    res = cli("audit", "--config", "gate.yaml", "--format", "json", cwd=tmp_path)
    assert res.code in (0, 1), res
    doc = json.loads(res.out)
    users = {v["report"]["kernel"]: v for v in doc["verdicts"] if v["report"] and v["report"]["status"] == "ok"
             and (v["report"]["scratch_bytes"] or v["report"]["scratch_space_bytes"])}
    return res.code, users, doc


def test_a_cold_new_scratch_user_passes_and_a_hot_one_fails(cli, sid_compiler, tmp_path):
    _project(tmp_path, sid_compiler.id, required=False)
    code, users, doc = _audit(cli, tmp_path)
    # Only the cold kernel uses scratch: 10 % of the profile, under the bound: it passes, saying why.
    assert set(users) == {"sg32_accumulate"} and code == 0
    assert users["sg32_accumulate"]["verdict"] == "LISTED"
    assert "passes the time rule" in users["sg32_accumulate"]["message"]
    shares = {k["name"]: k["share"] for k in doc["profile"]["kernels"]}
    assert shares["sg32_accumulate"] * 100 <= BOUND
    # Without the rule, the default stays: any new scratch user fails.
    _project(tmp_path, sid_compiler.id, required=False, rule=False)
    code, users, _ = _audit(cli, tmp_path)
    assert code == 1 and users["sg32_accumulate"]["verdict"] == "NEW"
    # The change: the hot kernel now requires SIMD32 and uses scratch; together the new users
    # cover the whole profile, over the bound: both fail.
    _project(tmp_path, sid_compiler.id, required=True)
    code, users, doc = _audit(cli, tmp_path)
    assert set(users) == {"sg32_accumulate", "private_histogram"} and code == 1
    assert {v["verdict"] for v in users.values()} == {"NEW"}
    assert all(f"over {BOUND:g} %" in v["message"] for v in users.values())


def test_the_rule_without_a_profile_is_a_usage_error(cli, sid_compiler, tmp_path):
    _project(tmp_path, sid_compiler.id, required=False, rule=False)
    with open(tmp_path / "gate.yaml", "a") as f:
        f.write(f"time_share_bound: {BOUND}\n")
    res = cli("audit", "--config", "gate.yaml", cwd=tmp_path)
    assert res.code == 2 and "needs a profile" in res.err and len(res.err.strip().splitlines()) == 1


def test_a_malformed_profile_is_one_line_and_exit_2(cli, sid_compiler, tmp_path):
    _project(tmp_path, sid_compiler.id, required=False)
    (tmp_path / "profile.csv").write_text('{"traceEvents": [')
    res = cli("audit", "--config", "gate.yaml", cwd=tmp_path)
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "profile.csv" in res.err, res


def test_the_diff_says_what_share_of_the_profile_a_change_adds_scratch_to(cli, sid_compiler, tmp_path):
    from markdown_it import MarkdownIt

    sides = {}
    for required in (False, True):
        _project(tmp_path, sid_compiler.id, required=required)
        code, doc = cli.json("inspect", tmp_path / "hot.cl", KERNELS / "sg32_accumulate.cl", "-t", "tgllp",
                             "--compiler", sid_compiler.id)
        assert code in (0, 1)
        sides[required] = tmp_path / f"{required}.json"
        sides[required].write_text(json.dumps(doc))
    code, doc = cli.json("diff", sides[False], sides[True], "--profile", tmp_path / "profile.csv")
    assert code == 1
    worse = {e["identity"]["kernel"] for e in doc["entries"] if e["change"] == "worse"}
    assert worse == {"private_histogram"}
    share = SHARES["private_histogram"] / sum(SHARES.values())
    assert doc["profile"]["worse_share"] == share
    res = cli("diff", sides[False], sides[True], "--profile", tmp_path / "profile.csv", "--format", "markdown")
    seen = MarkdownIt("commonmark").enable("table").render(res.out)
    assert f"this PR adds scratch to kernels covering {100 * share:.1f} % of the profile" in seen
