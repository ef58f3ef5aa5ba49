"""The runtime's choice of path (probes.paths) and the paths compared and judged (judge.paths):
pure functions of reports, checked rule by rule."""

from __future__ import annotations

from zeinspect.judge.paths import differences, judge_intent
from zeinspect.judge.ratchet import parse
from zeinspect.model import InputId, IntentRule, RunPath, Status, Target, Verdict
from zeinspect.probes.paths import Shipments, ShippedImage, mark_taken

from ..fakes import report

LIB = "lib.so"
BMG = Target("bmg-g21", "20.1.0")
LNL = Target("lnl-m", "20.4.4")


def shipped(*images: ShippedImage) -> Shipments:
    out = Shipments()
    for image in images:
        out.add((None, LIB, None), image)
    return out


def built(image: str, target: str, via: RunPath, **figures):
    ip = {"bmg-g21": "20.1.0", "lnl-m": "20.4.4"}[target]
    return report("k", target, ip=ip, input=f"{LIB}[{image}]" + {RunPath.GENERIC_IR: "(generic_ir)",
                                                                 RunPath.NATIVE_IR: "(ir)"}.get(via, ""),
                  origin=InputId(LIB, None, image), path=via, **figures)


def taken(reports):
    return {(r.target, r.path.value) for r in reports if r.path_taken}


ZEBIN = ShippedImage(f"{LIB}[.tgtimg[0]]", "zebin", frozenset({"k"}), ir_kind=RunPath.NATIVE_IR,
                     ir=f"{LIB}[.tgtimg[0]](ir)")
SPIRV = ShippedImage(f"{LIB}[.tgtimg[1]]", "SPIR-V image", frozenset({"k"}))
BUILDS = [built(".tgtimg[0]", "bmg-g21", RunPath.NATIVE), built(".tgtimg[1]", "bmg-g21", RunPath.SPIRV),
          built(".tgtimg[1]", "lnl-m", RunPath.SPIRV), built(".tgtimg[0]", "bmg-g21", RunPath.NATIVE_IR),
          built(".tgtimg[0]", "lnl-m", RunPath.NATIVE_IR)]


def test_a_native_image_without_compile_target_is_taken_on_every_gpu():
    got = mark_taken(BUILDS, shipped(ZEBIN, SPIRV), [BMG, LNL])
    assert taken(got) == {("bmg-g21", "native"), ("lnl-m", "native_ir")}


def test_a_compile_target_for_another_device_leaves_the_spirv_image():
    from dataclasses import replace

    got = mark_taken(BUILDS, shipped(replace(ZEBIN, compile_target="intel_gpu_bmg_g21"), SPIRV), [BMG, LNL])
    assert taken(got) == {("bmg-g21", "native"), ("lnl-m", "spirv")}


def test_the_first_native_image_wins_and_without_ir_there_is_no_path():
    from dataclasses import replace

    bare = replace(ZEBIN, ir_kind=None, ir=None)
    reports = [r for r in BUILDS if r.path is not RunPath.NATIVE_IR]
    got = mark_taken(reports, shipped(bare, SPIRV), [BMG, LNL])
    [failed] = [r for r in got if r.status is Status.BUILD_FAILED]
    assert failed.target == "lnl-m" and "no path on lnl-m" in failed.reason and failed.path_taken
    assert taken(got) == {("bmg-g21", "native"), ("lnl-m", "native")}


def test_an_ir_build_not_asked_for_is_no_finding():
    from dataclasses import replace

    unbuilt = replace(ZEBIN, ir=None)  # the zebin carries IR, its build was not asked for (--no-jit-paths)
    reports = [r for r in BUILDS if r.path is not RunPath.NATIVE_IR]
    got = mark_taken(reports, shipped(unbuilt, SPIRV), [BMG, LNL])
    assert not any(r.status is Status.BUILD_FAILED for r in got)
    assert taken(got) == {("bmg-g21", "native")}


def test_register_files_that_differ_are_one_finding_per_jit_path_naming_the_options():
    reports = mark_taken([built(".tgtimg[0]", "bmg-g21", RunPath.NATIVE, grf=256),
                          built(".tgtimg[1]", "lnl-m", RunPath.SPIRV, grf=128, spill=2048, options="-O2"),
                          built(".tgtimg[0]", "lnl-m", RunPath.NATIVE_IR, grf=256,
                                options="-cl-intel-256-GRF-per-thread")],
                         shipped(ShippedImage(f"{LIB}[.tgtimg[0]]", "zebin", frozenset({"k"}),
                                              compile_target="intel_gpu_bmg_g21", ir_kind=RunPath.NATIVE_IR,
                                              ir=f"{LIB}[.tgtimg[0]](ir)"), SPIRV), [BMG, LNL])
    [found] = differences(reports)
    assert (found.via, found.aspect, found.native, found.jit) == ("spirv", "grf", (256,), (128,))
    assert "ask for none" in found.text and "on targets served by JIT lnl-m: 128 registers, 2,048 B" in found.text


def test_intent_fails_each_path_that_misses_it_unless_the_ratchet_accepts_it():
    reports = mark_taken([built(".tgtimg[0]", "bmg-g21", RunPath.NATIVE, grf=256),
                          built(".tgtimg[1]", "lnl-m", RunPath.SPIRV, grf=128)], shipped(
        ShippedImage(f"{LIB}[.tgtimg[0]]", "zebin", frozenset({"k"}), compile_target="intel_gpu_bmg_g21"), SPIRV),
        [BMG, LNL])
    rules = (IntentRule("k", grf=256, native_on=("lnl-m",)),)
    found = judge_intent(reports, rules, parse("", "r.txt"), [])
    assert {j.verdict for j in found} == {Verdict.INTENT}
    assert len(found) == 2 and all(j.report.target == "lnl-m" for j in found)
    accepted = judge_intent(reports, rules, parse("k lnl-m intent # not ours to tune\n", "r.txt"), [])
    assert {j.verdict for j in accepted} == {Verdict.LISTED} and "not ours to tune" in accepted[0].message


def test_a_module_that_failed_on_the_path_taken_stays_judged():
    from zeinspect.model import WHOLE_MODULE

    failed = built(".tgtimg[1]", "lnl-m", RunPath.SPIRV).replace(kernel=WHOLE_MODULE, status=Status.BUILD_FAILED)
    got = mark_taken([built(".tgtimg[0]", "bmg-g21", RunPath.NATIVE), failed],
                     shipped(replace_target(ZEBIN, "intel_gpu_bmg_g21"), SPIRV), [BMG, LNL])
    assert [r.path_taken for r in got if r.kernel == WHOLE_MODULE] == [True]


def test_an_image_whose_table_is_unknown_holds_the_kernels_of_its_reports_only():
    from dataclasses import replace

    unknown = replace(ZEBIN, kernels=None, ir_kind=None, ir=None)
    other = built(".tgtimg[0]", "bmg-g21", RunPath.NATIVE).replace(kernel="other")
    spirv = built(".tgtimg[1]", "lnl-m", RunPath.SPIRV)
    got = mark_taken([other, spirv], shipped(unknown, SPIRV), [BMG, LNL])
    # The zebin holds `other` only: `k` runs from the SPIR-V image on lnl-m, and no false "no path".
    assert next(r for r in got if r.kernel == "k").path_taken
    assert not any(r.status is Status.BUILD_FAILED and r.kernel == "k" for r in got)


def test_without_targets_named_nothing_is_chosen():
    assert mark_taken(BUILDS, shipped(ZEBIN, SPIRV), []) == BUILDS


def test_a_compile_target_names_a_device_by_alias_or_ip():
    from zeinspect.probes.paths import fits

    dg2 = Target("dg2-g10", "12.55.8")
    assert fits("intel_gpu_acm_g10", dg2) and fits("intel_gpu_12_55_8", dg2) and fits("intel_gpu_dg2_g10", dg2)
    assert not fits("intel_gpu_bmg_g21", dg2) and fits(None, dg2)


def replace_target(image, compile_target):
    from dataclasses import replace

    return replace(image, compile_target=compile_target)
