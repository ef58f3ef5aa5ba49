"""`triton`: a Triton kernel (or every config of its autotune) built offline and audited."""

from __future__ import annotations

import sys

import click

from ..hardware import TRITON_TARGETS
from ..model import GrfMode
from .common import CompileOptions, cli, compile_options, own_stats, show_incidents, write


@cli.command()
@click.argument("spec", metavar="FILE.py:KERNEL|FILE.py|DIR|-- CMD...", nargs=-1)
@click.option("--signature", default="", help="Argument types: a_ptr=*fp16,b_ptr=*fp16,c_ptr=*fp32")
@click.option("--constexprs", default="", help="Constexpr values: M=64,N=128,K=128")
@click.option("--num-warps", type=click.IntRange(1, 64), default=None,
              help="Warps per program (default: as the module launches the kernel, else 4).")
@click.option("--threads-per-warp", type=click.Choice(["16", "32"]), default=None,
              help="Threads per warp (default: as the module launches the kernel, else 32).")
@click.option("--grf-mode", type=click.Choice([mode.triton for mode in GrfMode]), default=None,
              help="Triton-XPU's register file mode (default: as the module launches the kernel, else default).")
@click.option("--stage", is_flag=True, help="Apply the SLM staging pass to large FMA dots.")
@click.option("--artifacts", default=None, type=click.Path(file_okay=False), help="Keep TTGIR and SPIR-V here.")
@click.option("--autotune", is_flag=True, help="Screen every config of the kernel's @triton.autotune.")
@click.option("--fix", "fix_configs", is_flag=True,
              help="With --autotune: search the Triton levers (staging, register file, warps) for each failing config.")
@click.option("--build-policy", type=click.Choice(["jit", "native", "first"]), default="jit",
              help="Report the build Triton-XPU ends with when it loads the kernel (jit, the default), in its "
              "native-code path (native), or its first build only (first).")
@click.option("--explain", "explain", is_flag=True,
              help="Also show which Python lines spill, and how full the register file is on each.")
@click.option("--list", "list_only", is_flag=True,
              help="With FILE.py or DIR: list the launched kernels and the values each needs, compiling nothing.")
@click.option("--run", "run_command", is_flag=True,
              help="Run the command after `--` (a library's tests, examples, a script), capture every kernel it "
                   "launches, as Triton specialized it, and screen each on the targets; no GPU needed.")
@click.option("--run-timeout", type=click.FloatRange(1, None), default=None, metavar="SECONDS",
              help="With --run: stop the command after this long (what it launched until then is screened).")
@click.option("--from-cache", "cache_dir", default=None, metavar="DIR",
              help="Screen every kernel in a Triton cache folder (written wherever Triton ran: an Intel laptop, a "
                   "CUDA machine, Inductor) on the targets, from its TTIR and the options it was compiled with.")
@click.option("--json", "as_json", is_flag=True)
@compile_options
def triton(spec: tuple, run_command: bool, run_timeout: float | None, cache_dir: str | None, signature: str, constexprs: str,
           num_warps: int | None, threads_per_warp: str | None, grf_mode: str | None, stage: bool,
           artifacts: str | None, autotune: bool, fix_configs: bool, build_policy: str, explain: bool,
           list_only: bool, as_json: bool, compile: CompileOptions) -> None:
    """Compile a @triton.jit kernel offline for each target and audit what IGC made of it;
    with FILE.py or DIR, every kernel the modules launch.

    The module is loaded without running its program code (zeinspect.triton.loader): torch
    and other packages that are not installed do not stop it.  Values not given are the
    kernel's defaults, its autotune configs', or those its module's own code launches it with;
    `--signature '*fp16'` types every pointer.  KERNEL.NAME=VALUE gives a value to one kernel.

    With --run, `zeinspect triton --run -- CMD ARGS...` runs the library's own code instead and
    screens every kernel it launches, at the values it launches it with.  With --from-cache DIR,
    every kernel a Triton cache holds, built from its TTIR with the options it was compiled with."""
    if run_command or cache_dir is not None:
        if cache_dir is not None and (spec or run_command):
            raise click.UsageError("--from-cache DIR takes no FILE, DIR or --run")
        if run_command and not spec:
            raise click.UsageError("--run needs a command after `--`")
        config = compile.config(default_targets=TRITON_TARGETS)
        if cache_dir is not None:
            from ..triton.cache import screen_cache

            got = compile.run("compiling", lambda p: screen_cache(cache_dir, config, policy=build_policy, progress=p))
        else:
            from ..triton.library import screen_run

            got = compile.run("compiling", lambda p: screen_run(list(spec), config, timeout=run_timeout,
                                                                policy=build_policy, progress=p))
        # Imported here, not above: with --run, the screen's modules load while the command runs.
        from ..triton import views

        write(views.library_text(got) if not as_json else views.library_document(got, own_stats(got.collection.stats)))
        show_incidents(got.collection.incidents)
        sys.exit(got.exit_code)
    from pathlib import Path

    from ..triton import app, views
    from ..triton.kernel import TritonKernel, parse_pairs

    if len(spec) != 1:
        raise click.UsageError("give one FILE.py:KERNEL, FILE.py or DIR (or --run -- CMD ARGS..., or --from-cache DIR)")
    one: str = spec[0]

    path, sep, name = one.rpartition(":")
    if not sep or not path or Path(one).exists():
        path, name = one, ""
    given = {"num_warps": num_warps, "threads_per_warp": threads_per_warp, "grf_mode": grf_mode}
    # Options not given are as the module's own code launches the kernel (triton.discover).
    kernel = TritonKernel(file=path, kernel=name, signature=parse_pairs(signature, "signature"),
                          constexprs=parse_pairs(constexprs, "constexprs"), num_warps=num_warps or 4,
                          threads_per_warp=int(threads_per_warp or 32), grf_mode=grf_mode or "default",
                          options_given=frozenset(k for k, v in given.items() if v is not None))
    config = compile.config(default_targets=TRITON_TARGETS)
    if not name:
        found = compile.run("compiling", lambda p: app.screen_package(path, kernel, config, progress=p,
                                                                      policy=build_policy, build=not list_only))
        write(views.package_text(found, path) if not as_json else
               views.package_document(found, own_stats(found.collection.stats)))
        show_incidents(found.collection.incidents)
        sys.exit(found.exit_code)
    got = compile.run("compiling", lambda p: app.screen(
        kernel, config, autotune=autotune, fix=fix_configs, stage=stage, explain=explain, policy=build_policy,
        artifacts_dir=Path(artifacts) if artifacts else None, progress=p))
    write(views.render(got, as_json=as_json, stats=own_stats(got.stats)))
    show_incidents([i for c in got.collections for i in c.incidents])
    sys.exit(got.exit_code)


