"""A plain build answered from the dumping compile of the same build (probes.dumps): what a
shape search that reads its builds' ISA relies on to compile each shape once."""

from __future__ import annotations

import pytest
from conftest import KERNELS, Cli, generation
from sycl_builds import spirv_of

# Per generation, targets of two IPs (Debian 12's ocloc knows no Xe2).
TARGETS = {"current": "tgllp,bmg-g21", "debian": "tgllp,dg2-g10"}



@pytest.mark.parametrize("kernel", ["fma_tile.cl", "private_array.cl"])
def test_a_plain_build_answered_from_the_dumping_compile_is_the_plain_compile(fresh_cli, compiler, tmp_path, kernel):
    """`explain` makes the dumping compiles; `inspect` with the same cache then compiles
    nothing, and every report is, field for field, the one a plain compile gives with a cache
    of its own."""
    module = tmp_path / "k.spv"
    module.write_bytes(spirv_of(compiler, KERNELS / kernel, tmp_path, device="tgllp"))
    targets = TARGETS[generation(compiler)]
    args = ("-t", targets, "--compiler", compiler.id)
    res = fresh_cli("explain", module, *args, "-q")
    assert res.code in (0, 1), res
    code, answered = fresh_cli.json("inspect", module, *args)
    assert answered["stats"]["compiles"] == 0 and answered["stats"]["cache_hits"] == len(targets.split(","))
    plain_env = dict(fresh_cli.env, ZEINSPECT_CACHE_DIR=str(tmp_path / "plain-cache"))
    plain_code, plain = Cli(plain_env).json("inspect", module, *args)
    assert plain["stats"]["compiles"] == len(targets.split(","))  # the premise: these were compiled
    assert code == plain_code
    assert answered["reports"] == plain["reports"]
    # The compile's time comes with it (the build cost tables keep each module's), the dump's own.
    def timed(doc):
        return {(t["input"], t["target"]) for t in doc["compile_times"] if t["seconds"] > 0}

    assert timed(answered) == timed(plain) and len(timed(plain)) == len(targets.split(","))
    assert any(r["scratch_bytes"] for r in plain["reports"])  # a kernel whose figures say something


def test_a_build_that_does_not_build_is_answered_from_its_dumping_compile(fresh_cli, sid_compiler, tmp_path):
    """A scratch overflow (IGC 2.x refuses the live-set kernel on Xe2, after trying every way to
    fit): the dumping compile that failed is the plain compile's failure, its exit and its log,
    so it is not made a second time; every report is the one a plain compile gives."""
    module = tmp_path / "k.spv"
    module.write_bytes(spirv_of(sid_compiler, KERNELS / "ptss_overflow.cl", tmp_path, device="tgllp"))
    args = ("-t", "bmg-g21", "--compiler", sid_compiler.id)
    res = fresh_cli("explain", module, *args, "-q")
    assert res.code in (0, 1) and "did not build" in res.out + res.err, res
    code, answered = fresh_cli.json("inspect", module, *args)
    assert answered["stats"]["compiles"] == 0 and answered["stats"]["cache_hits"] == 1
    plain_code, plain = Cli(dict(fresh_cli.env, ZEINSPECT_CACHE_DIR=str(tmp_path / "plain-cache"))).json(
        "inspect", module, *args)
    assert plain["stats"]["compiles"] == 1 and code == plain_code == 1
    assert answered["reports"] == plain["reports"]
    [report] = plain["reports"]  # the premise: over the cap, with the log's figures
    assert report["status"] == "scratch_overflow" and report["needed_scratch_bytes"] > report["scratch_limit_bytes"]


def test_dumping_compiles_batched_in_one_process_are_each_the_compile_alone(compiler, tmp_path):
    """Several SPIR-V modules' dumping compiles in one `ocloc multi` process, where IGC dumps every
    build into one folder (toolchain.shader_dump): each build's dumps, zebin and log are the ones
    the same compile alone gives, told apart by IGC's hash of its module."""
    from zeinspect.toolchain.shader_dump import DumpModule, dump_isa, dump_isa_many

    targets = TARGETS[generation(compiler)].split(",")
    modules = [DumpModule(spirv_of(compiler, KERNELS / kernel, tmp_path, device="tgllp"), targets[n % 2], "", "")
               for n, kernel in enumerate(["fma_tile.cl", "private_array.cl", "clean.cl"])]
    batched = dump_isa_many(compiler, modules, timeout=600)
    for module, got in zip(modules, batched):
        alone = dump_isa(compiler, module.source, spirv=True, ip=module.ip, options="", internal_options="",
                         timeout=600)
        assert got is not None and alone.dumps and alone.exit_code == 0
        assert (got.dumps, got.binary, got.log, got.exit_code, got.failure) == \
               (alone.dumps, alone.binary, alone.log, alone.exit_code, alone.failure)
    names = [{d.file for d in got.dumps} for got in batched if got is not None]
    assert all(not (a & b) for k, a in enumerate(names) for b in names[k + 1:])  # each build its own
    with pytest.raises(ValueError):  # the same module twice would share its dumps' names
        dump_isa_many(compiler, [modules[0], modules[0]], timeout=600)


def test_a_dumping_compile_that_fails_in_a_batch_is_the_compile_alone(sid_compiler, tmp_path):
    """A scratch overflow among dumping compiles in one `ocloc multi` process: its exit, dumps and
    log are the ones the same compile alone gives (but for ocloc's framing line "Command was:",
    which only a compile alone prints, naming its temporary folder): not compiled again alone."""
    from zeinspect.toolchain.shader_dump import DumpModule, dump_isa, dump_isa_many

    modules = [DumpModule(spirv_of(sid_compiler, KERNELS / kernel, tmp_path, device="tgllp"), "bmg-g21", "", "")
               for kernel in ["clean.cl", "ptss_overflow.cl", "private_array.cl"]]
    batched = dump_isa_many(sid_compiler, modules, timeout=600)
    alone = dump_isa(sid_compiler, modules[1].source, spirv=True, ip="bmg-g21", options="", internal_options="",
                     timeout=600)
    assert alone.exit_code and alone.binary is None and alone.failure is None  # the premise: it does not build
    got = batched[1]
    assert got is not None and (got.exit_code, got.binary, got.failure, got.dumps) == \
        (alone.exit_code, alone.binary, alone.failure, alone.dumps)

    def framed(log: str) -> list[str]:
        return [line for line in log.splitlines() if not line.startswith("Command was:")]

    assert framed(got.log) == framed(alone.log) and "exceeds HW supported limit" in got.log
    assert all(b is not None and b.exit_code == 0 for k, b in enumerate(batched) if k != 1)
