"""The fix loop's choice on many specializations (triton.judge.TritonSearch with in_order) and its
grouping (fix_groups): pure functions of rows and records, no compile."""

from __future__ import annotations

import pytest

from zeinspect.judge.shapes import Cell, CellState
from zeinspect.triton.app.fix import one_lever_at_a_time
from zeinspect.triton.judge import TritonRow, TritonSearch, fix_groups
from zeinspect.triton.model.kernel import TritonKernel
from zeinspect.triton.model.levers import TRITON_LEVERS, TritonShape

from ..fakes import report

WRITTEN = TritonShape(num_warps=4)
KERNEL = TritonKernel(file="k.ttir", kernel="triton_mm", signature={}, constexprs={})


def _row(shape: TritonShape, *scratch: int) -> TritonRow:
    """A shape's row: its scratch on each target (0: clean; -1: it did not build there)."""
    cells = []
    for n, bytes_ in enumerate(scratch):
        target = f"t{n}"
        if bytes_ < 0:
            cells.append(Cell(target, CellState.FAILED, None, "over the cap"))
        else:
            state = CellState.SCRATCH if bytes_ else CellState.CLEAN
            cells.append(Cell(target, state, report(target=target, spill=bytes_)))
    return TritonRow(shape=shape, cells=cells, as_written=shape == WRITTEN, written=WRITTEN)


def _search(*rows: TritonRow, staged_a_dot: bool = False) -> TritonSearch:
    search = TritonSearch(kernel=KERNEL, rows=list(rows), in_order=True)
    if staged_a_dot:
        search.staging["staged"] = {"dots": [{"applied": True, "k_tile": 8, "slm_bytes": 4096}]}
    return search


def test_one_lever_at_a_time_is_in_the_levers_order_with_staging_first() -> None:
    shapes = one_lever_at_a_time(WRITTEN)
    assert shapes[0] == WRITTEN.replace(stage=True)
    assert WRITTEN not in shapes
    # Each shape departs from the written one in one lever, and every other setting of each lever is there.
    for shape in shapes:
        assert sum(getattr(shape, lv.name) != getattr(WRITTEN, lv.name) for lv in TRITON_LEVERS) == 1
    assert len(shapes) == sum(len(lv.settings(getattr(WRITTEN, lv.name))) - 1 for lv in TRITON_LEVERS)


def test_the_first_lever_in_order_that_cleans_is_the_change_even_if_a_later_one_keeps_more_threads() -> None:
    staged, warps = WRITTEN.replace(stage=True), WRITTEN.replace(num_warps=8)
    search = _search(_row(WRITTEN, 512, -1), _row(staged, 0, 0), _row(warps, 0, 0))
    assert search.winner is not None and search.winner.shape == staged
    assert "first of the levers tried one at a time" in search.why()
    # Without the order (one kernel, every shape built), the ranking decides as before.
    assert TritonSearch(kernel=KERNEL, rows=search.rows).first_clean is None


def test_where_no_lever_cleans_the_least_scratch_wins_unless_staging_applies() -> None:
    staged, warps = WRITTEN.replace(stage=True), WRITTEN.replace(num_warps=8)
    rows = (_row(WRITTEN, 512, -1), _row(staged, 256, 2048), _row(warps, 128, 1024))
    assert _search(*rows).winner.shape == warps
    # The staging pass staged a dot and a staged shape builds everywhere: the change shown is staged.
    search = _search(*rows, staged_a_dot=True)
    assert search.staged_only and search.winner.shape == staged
    assert "among the staged shapes" in search.why()
    # A staged shape that does not build anywhere is not chosen for being staged.
    broken = _search(_row(WRITTEN, 512, -1), _row(staged, 256, -1), _row(warps, 128, 1024), staged_a_dot=True)
    assert not broken.staged_only and broken.winner.shape == warps


def _fix(row: str, change: str, config: dict, template: str | None = "triton::mm for mm (64x64, 64x64 -> bfloat16)") -> dict:
    return {"row": row, "kernel": "triton_mm", "file": "train.py", "template": template, "config": config,
            "record": {"triton": change, "cleans": True, "found": True, "shape": {}, "why": "w"}}


def test_the_configs_of_one_template_are_one_group_with_their_ranges() -> None:
    fixes = [_fix("a", "num_warps=8", {"BLOCK_K": 32, "num_warps": 4}),
             _fix("b", "num_warps=8", {"BLOCK_K": 128, "num_warps": 4}),
             _fix("c", "num_warps=8", {"BLOCK_K": 64, "num_warps": 2}),
             _fix("d", "num_warps=8", {"BLOCK_K": 64, "num_warps": 2}, template="triton::mm for mm (32x64, 64x64 -> bfloat16)"),
             _fix("e", "grf_mode='256'", {"BLOCK_K": 16, "num_warps": 4})]
    groups = fix_groups(fixes)
    assert [g["specializations"] for g in groups] == [["a", "b", "c"], ["e"], ["d"]]
    assert groups[0]["configs"] == {"BLOCK_K": [32, 128], "num_warps": [2, 4]}
    assert groups[1]["configs"] == {"BLOCK_K": [16], "num_warps": [4]}
    # The change in Inductor's terms: its choices class drops, a heuristic of the user's own keeps.
    assert "inductor_choices_class" in groups[0]["inductor"]
    assert "register_template_heuristic('triton::mm', 'xpu', op_name='mm')" in groups[0]["inductor"]


def test_records_are_read_back_only_for_the_same_targets_and_compilers(tmp_path) -> None:
    from zeinspect.triton.app import records

    record = {"shape": WRITTEN.replace(stage=True).to_json(), "triton": "num_warps=4", "cleans": False, "found": True,
              "why": "w", "results": {"arl-s": {"status": "ok", "grf": 128, "simd": 16, "spill_bytes": 2048,
                                                "private_bytes": 0}}}
    fix = {"key": "k1", "row": "triton_mm[num_warps=4, *fp32, BLOCK_K=32, #2]", "kernel": "triton_mm", "file": "f.py",
           "template": None, "config": {}, "record": record,
           "as_launched_results": {"arl-s": {"status": "ok", "spill_bytes": 4096, "private_bytes": 0}}}
    path = str(tmp_path / "fixes.yaml")
    records.save(path, [fix], ("arl-s",), ["ocloc-1"])
    assert records.load(path, ("arl-s",), ["ocloc-1"])["k1"]["record"] == record
    from zeinspect.errors import InputError

    # Records of other targets or compilers are never read for these, nor overwritten by them.
    for targets, compilers in ((("arl-s", "bmg-g21"), ["ocloc-1"]), (("arl-s",), ["ocloc-2"])):
        with pytest.raises(InputError, match="give --write another file"):
            records.load(path, targets, compilers)
    assert records.recorded_shape(fix) == WRITTEN.replace(stage=True)
    assert records.same_figures(fix, record["results"])
    assert not records.same_figures(fix, {"arl-s": {**record["results"]["arl-s"], "spill_bytes": 1024}})
    # The line for what no lever cleans matches its row and no other.
    # The line for what no lever cleans: its figures as launched, matching its row and not another,
    # and a line the ratchet's own parser reads back whole.
    [line] = records.ratchet_lines([fix])
    from zeinspect.judge import ratchet

    assert line.spill == 4096 and ratchet.kernel_matches(line.kernel, fix["row"])
    assert not ratchet.kernel_matches(line.kernel, "triton_mm[num_warps=4, *fp32, BLOCK_K=64, #2]")
    assert not ratchet.kernel_matches(line.kernel, "triton_mm[num_warps=4, *fp32, BLOCK_K=32, #2]x")
    [entry] = ratchet.parse(line.render() + "\n", "r.txt").entries
    assert entry.kernel == line.kernel and entry.spill == 4096
    (tmp_path / "bad.yaml").write_text("schema: something-else\n")
    with pytest.raises(InputError, match="bad.yaml: not a zeinspect Triton fix record"):
        records.load(str(tmp_path / "bad.yaml"), ("arl-s",), [])


def test_a_groups_cost_is_the_occupancy_and_slm_of_its_members_as_launched_and_chosen() -> None:
    from zeinspect import occupancy
    from zeinspect.model import Status
    from zeinspect.triton.judge import cost_of
    from zeinspect.triton.views import cost_text

    # The occupancy is zeinspect.occupancy's for the build's own figures (registers, SIMD, SLM, work-group).
    wide = report(target="arl-s", ip="12.74.4", grf=256, spill=0, slm_bytes=32768, work_group_size=128)
    assert cost_of(wide) == {"occupancy": round(occupancy.of(wide).xe_core_occupancy, 4),
                             "threads_per_eu": occupancy.of(wide).threads_per_eu,
                             "limited_by": occupancy.of(wide).limited_by, "slm_bytes": 32768}
    assert cost_of(report(status=Status.BUILD_FAILED)) is None  # no build, no cost
    narrow = cost_of(report(target="arl-s", ip="12.74.4", grf=128, work_group_size=128))
    assert narrow["threads_per_eu"] > cost_of(wide)["threads_per_eu"]

    def fix(row: str, launched: dict | None, chosen: dict) -> dict:
        return {**_fix(row, "grf_mode='256'", {}), "as_launched_results": {"arl-s": {"cost": launched}},
                "record": {"triton": "grf_mode='256'", "cleans": True, "found": True, "shape": {}, "why": "w",
                           "results": {"arl-s": {"cost": chosen}}}}

    [group] = fix_groups([fix("a", narrow, cost_of(wide)), fix("b", None, {**cost_of(wide), "slm_bytes": 65536})])
    cost = group["cost"]["arl-s"]
    assert cost["as_launched_occupancy"] == [narrow["occupancy"]] * 2  # b did not build as launched
    assert cost["chosen_slm_bytes"] == [32768, 65536]
    assert cost_text(group["cost"]).startswith(f"arl-s occupancy {round(narrow['occupancy'] * 100)}% -> ")
    assert "SLM 0 B -> 32K..64K" in cost_text(group["cost"])


def test_a_smaller_k_block_is_the_largest_clean_one_of_a_config_alike_in_all_else() -> None:
    from zeinspect.triton.judge import smaller_k_block

    own = {"BLOCK_M": 64, "BLOCK_K": 128, "num_warps": 4}
    siblings = [({"BLOCK_M": 64, "BLOCK_K": 32, "num_warps": 4}, "k32"),
                ({"BLOCK_M": 64, "BLOCK_K": 64, "num_warps": 4}, "k64"),
                ({"BLOCK_M": 128, "BLOCK_K": 64, "num_warps": 4}, "other M"),   # differs in more than K
                ({"BLOCK_M": 64, "BLOCK_K": 256, "num_warps": 4}, "k256")]      # larger
    assert smaller_k_block(own, siblings) == ("BLOCK_K", 64, "k64")
    assert smaller_k_block(own, siblings[2:]) is None
    assert smaller_k_block({"BLOCK_M": 64}, siblings) is None  # no K block: nothing to make smaller
    # The Triton tutorials' spelling is a K block too.
    assert smaller_k_block({"BLOCK_SIZE_K": 64, "GROUP": 8}, [({"BLOCK_SIZE_K": 32, "GROUP": 8}, "t")])[1] == 32


def test_a_k_block_change_is_a_group_of_its_own_with_inductors_drop_advice() -> None:
    smaller = {**_fix("a", "BLOCK_K=32", {"BLOCK_K": 64})["record"], "k_block": {"name": "BLOCK_K", "value": 32,
                                                                                 "row": "r"}}
    fixes = [{**_fix("a", "BLOCK_K=32", {"BLOCK_K": 64}), "record": smaller},
             _fix("b", "num_warps=8", {"BLOCK_K": 64})]
    groups = fix_groups(fixes)
    [k] = [g for g in groups if g["k_block"]]
    assert k["specializations"] == ["a"] and "smaller K block" in k["inductor"]
    assert all("smaller K block" not in g["inductor"] for g in groups if not g["k_block"])


def test_a_k_block_sibling_must_match_in_stages_and_staging_too() -> None:
    from dataclasses import replace

    from zeinspect.triton.app.fix import config_values
    from zeinspect.triton.judge import smaller_k_block
    from zeinspect.triton.model.specialization import Specialization

    def spec(block: int, stages: int, staged: bool = False) -> Specialization:
        kernel = replace(KERNEL, constexprs={"BLOCK_K": block}, num_warps=4, num_stages=stages)
        return Specialization(kernel=kernel, staged=staged)

    own = config_values(spec(128, 3))
    assert smaller_k_block(own, [(config_values(spec(32, 3)), "same stages")])[2] == "same stages"
    assert smaller_k_block(own, [(config_values(spec(32, 2)), "other stages")]) is None
    assert smaller_k_block(own, [(config_values(spec(32, 3, staged=True)), "staged")]) is None
