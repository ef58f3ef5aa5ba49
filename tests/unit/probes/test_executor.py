"""The cache in front of any executor: hits never reach the backend, twins compile once."""

from __future__ import annotations

from zeinspect.cache import BuildCache
from zeinspect.inputs import Input
from zeinspect.levers import DEFAULT_SHAPE
from zeinspect.probes.executor import (
    MULTI_ALONE_BYTES,
    MULTI_MAX_BYTES,
    MULTI_MAX_JOBS,
    CachedExecutor,
    Job,
    multi_eligible,
    pack,
)
from zeinspect.toolchain.ocloc import multi_line, multi_outputs

from ..fakes import FAKE_COMPILER, FakeBackend, figures


def job(ip: str, source: bytes = b"__kernel void k() {}") -> Job:
    inp = Input(path="k.cl", kind="opencl", data=source)
    return Job(inp, source, inp.kind, ip, FAKE_COMPILER, "", "", DEFAULT_SHAPE)


def test_identical_jobs_compile_once_and_a_second_run_is_served_from_the_cache(tmp_path):
    backend = FakeBackend(lambda j: [figures(spill=64)])
    jobs = [job("12.55.8"), job("12.55.8"), job("20.1.0")]
    first = CachedExecutor(backend, BuildCache(tmp_path))
    got = first.run(jobs)
    assert [c.figures[0].spill_bytes for c in got] == [64, 64, 64]
    assert len(backend.ran) == 2 and first.stats().shared == 1 and first.stats().cache_hits == 0
    again = CachedExecutor(FakeBackend(lambda j: None), BuildCache(tmp_path))
    got = again.run(jobs)
    assert all(c.from_cache for c in got) and again.stats().cache_hits == 2 and again.stats().compiles == 0


def test_results_stream_to_on_result_and_none_are_kept(tmp_path):
    seen = {}
    executor = CachedExecutor(FakeBackend(lambda j: [figures()]), BuildCache(None))
    kept = executor.run([job("12.55.8"), job("20.1.0")], on_result=lambda i, c: seen.setdefault(i, c))
    assert sorted(seen) == [0, 1] and kept == [None, None]


def test_a_different_module_or_ip_is_a_different_job():
    assert job("12.55.8").key != job("20.1.0").key
    assert job("12.55.8").key != job("12.55.8", b"__kernel void j() {}").key
    assert job("12.55.8").key == job("12.55.8").key


def spirv_job(n: int, size: int = 1000, options: str = "") -> Job:
    module = bytes([n % 256]) * size
    inp = Input(path=f"m{n}.spv", kind="spirv", data=module)
    return Job(inp, module, inp.kind, "12.55.8", FAKE_COMPILER, options, "", DEFAULT_SHAPE)


def test_modules_built_alone_are_packed_to_keep_every_worker_busy():
    jobs = [spirv_job(n) for n in range(200)]
    batches = pack(list(range(200)), jobs, workers=2)
    assert sorted(i for b in batches for i in b) == list(range(200))
    assert len(batches) >= 8 and max(len(b) for b in batches) <= MULTI_MAX_JOBS
    few = pack([0, 1, 2], jobs, workers=2)
    assert len(few) == 3  # three jobs on two workers: no batch would keep both busy


def test_what_cannot_be_a_line_of_a_multi_list_is_built_alone():
    large = spirv_job(0, size=MULTI_ALONE_BYTES + 1)
    quoted = spirv_job(1, options='-DNAME="x"')
    source = job("12.55.8")
    assert not any(multi_eligible(j) for j in (large, quoted, source))
    assert multi_eligible(spirv_job(2, options="-cl-intel-256-GRF-per-thread -O2"))
    jobs = [large, quoted, spirv_job(2), spirv_job(3)]
    assert sorted(map(sorted, pack([0, 1, 2, 3], jobs, workers=1))) == [[0], [1], [2, 3]]


def test_a_multi_line_quotes_values_with_spaces_as_ocloc_reads_them():
    argv = ["ocloc", "compile", "-file", "m0.spv", "-device", "12.55.8", "-options", "-a -b", "-internal_options", ""]
    assert multi_line(argv) == '-file m0.spv -device 12.55.8 -options "-a -b" -internal_options ""'


def test_a_multi_runs_output_is_split_per_build_and_a_build_a_crash_cut_short_is_not_trusted():
    output = ("Command number 1: \nBuild succeeded.\nCommand number 2: \nwarning: x\nBuild succeeded.\n"
              "Command number 3: \nBuild succeeded.\nBuild command 0: successful\n")
    whole = multi_outputs(output, cut_short=False)
    assert whole == {0: "Build succeeded.\n", 1: "warning: x\nBuild succeeded.\n", 2: "Build succeeded.\n"}
    assert multi_outputs(output, cut_short=True) == {0: whole[0], 1: whole[1]}


def test_batches_are_a_whole_number_per_worker_and_of_about_the_same_size():
    """A module's compile time grows with its size: the batches of one compiler are balanced by
    SPIR-V bytes (within the largest module), each job in one, a whole number per worker."""
    sizes = [1000 + (n * 7919) % 200_000 for n in range(108)]
    jobs = [spirv_job(n, size=size) for n, size in enumerate(sizes)]
    batches = pack(list(range(108)), jobs, workers=2)
    assert sorted(i for b in batches for i in b) == list(range(108))
    assert len(batches) % 2 == 0 and len(batches) >= 4
    totals = [sum(sizes[i] for i in b) for b in batches]
    assert max(totals) - min(totals) <= max(sizes)
    assert totals == sorted(totals, reverse=True)  # the largest batch starts first
    assert all(t <= MULTI_MAX_BYTES for t in totals) and all(len(b) <= MULTI_MAX_JOBS for b in batches)


def _dumping_job(n: int, options: str = "", module: bytes | None = None) -> Job:
    from dataclasses import replace

    made = spirv_job(n, options=options)
    return replace(made, module=module or made.module, dump=True)


def _built(binary: bytes | None = b"zebin", *, failure: str | None = None, exit_code: int = 0,
           log: str = "Build succeeded.\n"):
    from zeinspect.toolchain.shader_dump import DumpedBuild, IsaDump

    return DumpedBuild((IsaDump("OCL_asm0_simd16_entry_0001.asm", "//.kernel k\n"),), log, failure, binary, exit_code,
                       1.0)


def test_a_dumping_batch_holds_each_module_once_and_what_it_did_not_build_is_built_alone(monkeypatch):
    """IGC names a build's dumps by its module: the same module under other options waits for a
    compile of its own (None: the executor builds it alone), as does a build the batch lost."""
    from zeinspect.probes import executor
    from zeinspect.toolchain import shader_dump  # executor._dumping imports its compiles when it runs

    asked = []

    def many(compiler, modules, *, timeout, environment):
        asked.append([m.options for m in modules])
        return [_built(), None]

    monkeypatch.setattr(shader_dump, "dump_isa_many", many)
    shared = bytes([7]) * 100
    jobs = [_dumping_job(0, module=shared), _dumping_job(1, "-O1", module=shared), _dumping_job(2)]
    got = executor._dumping(jobs, None)
    assert asked == [["", ""]]  # the first of the two alike, and the third
    assert got[0] is not None and got[0].dumped is not None and got[0].run_failure is None
    assert got[1] is None and got[2] is None


def test_a_dumping_compile_alone_is_the_plain_build_whether_it_built_failed_or_hung(monkeypatch):
    """A hang is the finding (not waited for twice); a build that failed is the plain build's
    failure, with its exit and log (not compiled again); only a compile that says it built and
    left no zebin, or could not be prepared, is made again plain."""
    from zeinspect.probes import executor
    from zeinspect.toolchain import shader_dump

    plain = []
    monkeypatch.setattr(executor, "compile_job", lambda job, timeout: plain.append(job) or "plain")
    monkeypatch.setattr(shader_dump, "dump_isa", lambda *a, **k: _built(None, failure="timed out after 600 s"))
    [hung] = executor._dumping([_dumping_job(0)], 600)
    assert hung.run_failure == "timed out after 600 s" and hung.binary is None and hung.returncode is None
    assert not plain
    overflow = "error: total scratch space exceeds HW supported limit\nBuild failed with error code: -11\n"
    monkeypatch.setattr(shader_dump, "dump_isa", lambda *a, **k: _built(None, exit_code=245, log=overflow))
    [failed] = executor._dumping([_dumping_job(0)], 600)
    assert (failed.run_failure, failed.returncode, failed.binary, failed.figures) == (None, 245, None, None)
    assert failed.log == overflow and failed.dumped is not None and not plain
    monkeypatch.setattr(shader_dump, "dump_isa", lambda *a, **k: _built(None))
    assert executor._dumping([_dumping_job(0)], 600) == ["plain"] and len(plain) == 1

    def full(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(shader_dump, "dump_isa", full)
    assert executor._dumping([_dumping_job(0)], 600) == ["plain"] and len(plain) == 2


def test_a_dumping_compiles_isa_is_kept_only_where_the_build_may_use_scratch(tmp_path):
    """The plain entry always (its figures and log, no zebin); the dump entry, which the costs
    read, only for a build whose zebin or log speaks of scratch."""
    from dataclasses import replace

    from zeinspect.probes import executor
    from zeinspect.probes.dumps import read_dumped

    class Dumping(FakeBackend):
        def run(self, jobs, progress, on_result):
            super().run(jobs, progress, lambda i, c: on_result(i, replace(c, dumped=_built())))

    jobs = [_dumping_job(0), _dumping_job(1)]
    spills = {jobs[0].key: 64, jobs[1].key: 0}
    cache = BuildCache(tmp_path)
    got = CachedExecutor(Dumping(lambda j: [figures(spill=spills[j.key])]), cache).run(jobs)
    assert all(c.dumped is None for c in got)  # no ISA outlives its result
    kept = [read_dumped(cache, executor._dump_fields(j)) for j in jobs]
    assert kept[0] is not None and kept[0].dumps and kept[1] is None
    assert all(cache.get(j.key)[1] == b"" and cache.get(j.key)[0]["has_binary"] for j in jobs)


def test_a_module_dumped_for_several_ips_is_not_a_fat_build(monkeypatch):
    """A fat build writes every IP's dumps into one folder: dumping jobs of one module on two IPs
    go to `ocloc multi` lists (one module per list: IGC names dumps by the module), not DEVICES."""
    from dataclasses import replace

    from zeinspect.probes import executor
    from zeinspect.probes.executor import DEVICES, LocalExecutor

    monkeypatch.setattr(executor, "_has_multi", lambda compiler: True)
    one = spirv_job(0)
    plain = [one, replace(one, ip="20.1.0")]
    dumping = [replace(j, dump=True) for j in plain]
    local = LocalExecutor(workers=1)
    assert [t.mode for t in local._tasks(plain, [0, 1], 1)] == [DEVICES]
    assert DEVICES not in {t.mode for t in local._tasks(dumping, [0, 1], 1)}


def test_a_fat_build_lists_the_newest_ip_first():
    """ocloc stops a fat build at the first device that fails and keeps nothing built before it:
    the newest IPs, the likeliest to refuse a module, come first, on every worker's share."""
    from dataclasses import replace

    from zeinspect.hardware import parse_ip
    from zeinspect.probes.executor import DEVICES, LocalExecutor

    # 12.10.0 is newer than 12.9.0, though not as a string.
    ips = ["12.0.0", "20.1.0", "12.9.0", "12.55.8", "12.10.0", "12.70.4", "20.4.4"]
    one_module = job(ips[0])
    jobs = [replace(one_module, ip=ip) for ip in ips]
    [one] = LocalExecutor(workers=1)._tasks(jobs, list(range(len(jobs))), 1)
    assert one.mode == DEVICES and [ips[i] for i in one.jobs] == [
        "20.4.4", "20.1.0", "12.70.4", "12.55.8", "12.10.0", "12.9.0", "12.0.0"]
    shares = LocalExecutor(workers=2)._tasks(jobs, list(range(len(jobs))), 2)
    assert len(shares) == 2 and all(
        [ips[i] for i in t.jobs] == sorted((ips[i] for i in t.jobs), key=parse_ip, reverse=True) for t in shares)


def test_a_builds_exit_in_an_ocloc_multi_list_is_read_from_its_own_output():
    """ocloc prints each build's log, then its verdict with the code it returns alone (-11 exits
    245); a failure is taken only with the compiler's own reason, and output cut short is none."""
    from zeinspect.toolchain.ocloc import multi_exit

    overflow = ("error: in kernel 'k': total scratch space exceeds HW supported limit: 292480 bytes (max permitted "
                "PTSS 262144 bytes)\nerror: backend compiler failed build.\n\nBuild failed with error code: -11\n")
    assert multi_exit("Compilation from IR - skipping loading of FCL\nBuild succeeded.\n") == 0
    assert multi_exit(overflow) == 245
    assert multi_exit("Error: Input file m1.spv missing.\nBuild failed with error code: -5151\n") == 225
    assert multi_exit("Build failed with error code: -11\n") is None  # no reason of the compiler's
    assert multi_exit(overflow.replace("Build failed with error code: -11\n", "")) is None  # cut short
