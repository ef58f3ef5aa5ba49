"""judge.diff: identity across builds, verdicts, thresholds and what cannot be compared."""

from __future__ import annotations

from zeinspect.formats import diff as diff_fmt
from zeinspect.judge.diff import NA, UNREADABLE, Change, Thresholds, compare, side


def report(kernel="k", target="dg2-g10", *, file="lib.so", image=".tgtimg[1]", variant="spir64", status="ok",
           spill=0, private=0, grf=128, simd=16, threads=8, max_wg=1024, wg=None, **extra):
    scratch = None if status != "ok" else spill + private
    return {"input": f"{file}[{image}]" if image else file, "kernel": kernel, "target": target, "status": status,
            "spill_bytes": spill if status == "ok" else None, "private_bytes": private if status == "ok" else None,
            "scratch_bytes": scratch, "grf": grf, "simd": simd, "work_group_size": wg, "code_bytes": 1024,
            "origin": {"file": file, "member": None, "image": image, "variant": variant},
            "occupancy": {"threads_per_eu": threads, "max_work_group_size": max_wg} if status == "ok" else None,
            **extra}


def run(old, new, th=None):
    return compare(side(old), side(new), th or Thresholds())


def only(result):
    (entry,) = result.entries
    return entry


def test_the_image_index_and_the_file_name_are_not_identity():
    old = [report(file="libfoo.so.1", image=".tgtimg[3]")]
    new = [report(file="libfoo.so.2", image=".tgtimg[907]")]
    assert only(run(old, new)).change is Change.SAME


def test_images_of_one_kernel_that_differ_in_their_properties_are_different_rows():
    old = [report(variant="spir64; aspects fp64", spill=64), report(variant="spir64", spill=0)]
    new = [report(variant="spir64", spill=0, image=".tgtimg[9]"), report(variant="spir64; aspects fp64", spill=64)]
    result = run(old, new)
    assert len(result.entries) == 2 and all(e.change is Change.SAME for e in result.entries)


def test_several_images_with_one_identity_are_one_row_judged_by_the_worst_copy():
    old = [report(image=".tgtimg[1]", spill=0), report(image=".tgtimg[2]", spill=0)]
    new = [report(image=".tgtimg[5]", spill=0), report(image=".tgtimg[6]", spill=512)]
    entry = only(run(old, new))
    assert entry.change is Change.WORSE and entry.new.count == 2 and entry.new.get("scratch_bytes") == 512


def test_files_of_a_folder_are_paired_relative_to_each_sides_root():
    old = [report(file="old/a.cl", image=None, variant=None), report(file="old/b.cl", image=None, variant=None)]
    new = [report(file="new/a.cl", image=None, variant=None), report(file="new/b.cl", image=None, variant=None,
                                                                     spill=128)]
    result = run(old, new)
    assert {e.identity.where: e.change for e in result.entries} == {"a.cl": Change.SAME, "b.cl": Change.WORSE}


def test_worse_is_any_of_more_scratch_failing_fewer_threads_or_an_unlaunchable_work_group():
    assert only(run([report(spill=0)], [report(spill=4096)])).why == ("scratch 0 -> 4096 bytes",)
    assert only(run([report()], [report(status="scratch_overflow")])).change is Change.WORSE
    assert only(run([report()], [report(status="build_failed")])).change is Change.WORSE
    e = only(run([report(threads=8)], [report(threads=4, spill=0)]))
    assert e.change is Change.WORSE and e.why == ("threads per EU 8 -> 4",)
    e = only(run([report(max_wg=1024, wg=1024)], [report(max_wg=512, wg=1024)]))
    assert e.change is Change.WORSE and "below the 1024 it requires" in e.why[0]
    # A smaller largest work-group with no required one is listed, not a regression.
    e = only(run([report(max_wg=1024)], [report(max_wg=512)]))
    assert e.change is Change.SAME and "max_work_group_size" in e.changed


def test_less_scratch_with_fewer_threads_is_worse_the_trade_is_said():
    e = only(run([report(spill=4096, grf=128, threads=8)], [report(spill=0, grf=256, threads=4)]))
    assert e.change is Change.WORSE and e.why == ("threads per EU 8 -> 4",)
    assert {"scratch_bytes", "grf", "threads_per_eu"} <= set(e.changed)


def test_better_is_the_reverse_with_nothing_worse():
    assert only(run([report(spill=512)], [report(spill=0)])).change is Change.BETTER
    assert only(run([report(status="scratch_overflow")], [report()])).change is Change.BETTER


def test_thresholds_keep_small_growth_from_being_a_regression():
    assert only(run([report(spill=1000)], [report(spill=1050)], Thresholds(min_bytes=64))).change is Change.SAME
    assert only(run([report(spill=1000)], [report(spill=1050)], Thresholds(min_ratio=0.1))).change is Change.SAME
    assert only(run([report(spill=1000)], [report(spill=1200)], Thresholds(min_ratio=0.1))).change is Change.WORSE
    assert only(run([report(spill=0)], [report(spill=8)], Thresholds(min_ratio=0.5))).change is Change.WORSE


def test_added_removed_and_what_one_side_did_not_look_at():
    result = run([report("a"), report("b", target="tgllp")], [report("a"), report("c")])
    changes = {(e.identity.kernel, e.identity.target): e.change for e in result.entries}
    assert changes == {("a", "dg2-g10"): Change.SAME, ("c", "dg2-g10"): Change.ADDED}
    assert result.only_old_targets == ("tgllp",)
    # Applicable on one side only.
    e = only(run([report(status="not_applicable")], [report()]))
    assert e.change is Change.ADDED


def test_unreadable_values_make_the_comparison_untrusted_never_a_regression():
    bad = report(spill=0)
    bad["scratch_bytes"] = "lots"
    result = run([report()], [bad])
    assert only(result).change is Change.UNREADABLE and not result.trusted and not result.regressed
    crashed = compare(side([report()]), side([report(status="build_failed")], crashed={0}))
    assert only(crashed).change is Change.UNREADABLE and not crashed.regressed


def test_values_are_numbers_na_or_unreadable():
    (row,) = side([report(status="build_failed")]).values()
    assert row.get("scratch_bytes") == NA and row.get("threads_per_eu") == NA
    weird = report()
    weird["grf"] = True
    (row,) = side([weird]).values()
    assert row.get("grf") == UNREADABLE


def test_renames_are_paired_by_name_and_said_to_be_a_guess():
    result = run([report("reduce_sum_kernel_v1")], [report("reduce_sum_kernel_v2")])
    assert [(a.identity.kernel, b.identity.kernel) for a, b in result.likely_renames()] == [
        ("reduce_sum_kernel_v1", "reduce_sum_kernel_v2")]
    assert run([report("alpha")], [report("omega_zeta")]).likely_renames() == []


class _Run:
    def __init__(self, result):
        self.result, self.explained, self.seconds, self.profiled = result, {}, 0.0, None
        self.old = self.new = type("S", (), {"compilers": []})()


def test_the_pull_request_comment_stays_under_githubs_limit_whatever_the_size():
    old = [report(f"kernel_{n}_" + "x" * 200) for n in range(3000)]
    new = [report(f"kernel_{n}_" + "x" * 200, spill=64 * (n + 1)) for n in range(3000)]
    text = diff_fmt.markdown(_Run(run(old, new)))
    assert len(text) < 65_000 and "3000 regression(s)" in text and "more regression(s) not shown" in text


def test_a_self_diff_has_nothing_to_say():
    reports = [report("a"), report("b", spill=64)]
    result = run(reports, reports)
    assert result.counts()["same"] == 2 and not result.regressed and result.trusted
    assert "No kernel got worse." in diff_fmt.markdown(_Run(result))


def test_the_figures_are_the_fields_in_their_order():
    from zeinspect.judge.diff import NUMBERS, fields, figures_of

    assert tuple(figures_of(report())) == fields() == ("status", *NUMBERS, "triton_retry")


def test_a_librarys_changes_read_by_family_first_most_regressions_first():
    old = [report("fmha::Fwd<int, 1>"), report("fmha::Fwd<int, 2>"), report("fmha::Fwd<int, 3>", spill=64),
           report("moe::Gate<float>", spill=128), report("moe::Gate<half>")]
    new = [report("fmha::Fwd<int, 1>", spill=64), report("fmha::Fwd<int, 2>", spill=64), report("fmha::Fwd<int, 3>"),
           report("moe::Gate<float>", spill=256), report("moe::Gate<half>")]
    result = run(old, new)
    assert diff_fmt.by_family(result) == [("Fwd", 2, 1), ("Gate", 1, 0)]
    md = diff_fmt.markdown(_Run(result))
    assert "| `Fwd` | 2 | 1 |" in md and md.index("| family |") < md.index("| kernel |")
    text = diff_fmt.text(_Run(result))
    assert "  Fwd: 2 worse, 1 better" in text and text.index("by family") < text.index("worse:")
    # One family says nothing a summary line does not.
    assert diff_fmt.by_family(run(old[:3], new[:3])) == []
