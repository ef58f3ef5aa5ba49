"""The runtime probe: build modules through Level Zero exactly as an application would.

The work happens in a child process (`python -m zeinspect.probes.runtime`) with a
timeout: drivers crash (a handle from a failed zeKernelCreate crashes the process that
uses it; unstable's NEO crashes inside zeInit in hardware-free mode), and a crash or a
hang must become a finding, not a dead tool.  The child reports each step before taking
it, so a crash names the call and the kernel.  It runs in a temporary folder that is
removed afterwards: in hardware-free mode the driver writes `*.aub` files into the
working directory.

Without a GPU, `simulate=PRODUCT` starts NEO's hardware-free device with its debug keys
(NEOReadDebugKeys, SetCommandStreamReceiver=1, ProductFamilyOverride, HardwareInfoOverride,
ForceDeviceId): loader, driver and compiler all run for real.  Seen working with Debian
12's NEO 22.43: tgllp, dg2, mtl, pvc (docs/how-it-works.md#level-zero).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any

from ..errors import ToolchainError
from ..hardware import SIMULATED
from ..inputs import Input
from ..inputs.kinds import InputKind
from ..levers import DEFAULT_SHAPE
from ..model import WHOLE_MODULE, KernelReport, Remarks, Source, Status, driver_version_text, scratch_limit_for_ip
from ..toolchain import environment as compiler_environment

DEFAULT_TIMEOUT = 600.0


@dataclass(frozen=True)
class RuntimeConfig:
    simulate: str | None = None
    device: int = 0
    build_flags: str = ""
    kernels: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    environment: tuple[tuple[str, str], ...] = ()
    """The run's compiler variables (toolchain.environment): the driver builds under them."""


@dataclass
class RuntimeResult(Remarks):
    reports: list[KernelReport] = field(default_factory=list)
    device: dict = field(default_factory=dict)
    driver: dict = field(default_factory=dict)


def simulation_env(product: str) -> dict:
    if product not in SIMULATED:
        from ..errors import UsageError

        raise UsageError(f"cannot simulate {product!r}; known: {', '.join(sorted(SIMULATED))}")
    family, hw, device_id, _ = SIMULATED[product]
    return {"NEOReadDebugKeys": "1", "SetCommandStreamReceiver": "1", "ProductFamilyOverride": family,
            "HardwareInfoOverride": hw, "ForceDeviceId": device_id}


def _spawn(request: dict, config: RuntimeConfig) -> tuple[list[dict], int | None, bool]:
    """Run the child; (messages it printed, its return code, timed out?)."""
    env = compiler_environment.process(config.environment,
                                       simulation_env(config.simulate) if config.simulate else None)
    with tempfile.TemporaryDirectory(prefix="zeinspect-ze-") as tmp:  # *.aub files land here and go with it
        proc = subprocess.Popen([sys.executable, "-m", "zeinspect.probes.runtime"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp,
                                start_new_session=True, text=True)
        timed_out = False
        try:
            out, _err = proc.communicate(json.dumps(request), timeout=config.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            out, _err = proc.communicate()
    messages = []
    for line in out.splitlines():
        try:
            messages.append(json.loads(line))
        except ValueError:
            continue
    return messages, proc.returncode, timed_out


def _crash_text(messages: list[dict], code: int | None, timed_out: bool, timeout: float) -> str:
    step = next((m for m in reversed(messages) if m.get("kind") == "step"), None)
    where = ""
    if step:
        where = f" in {step['call']}" + (f" for kernel {step['kernel']}" if step.get("kernel") else "")
    if timed_out:
        return f"driver hung{where}: no answer after {timeout:.0f} s"
    try:
        name = signal.Signals(-code).name if code and code < 0 else None
    except ValueError:
        name = None
    return f"driver crashed: signal {-code} ({name}){where}" if code and code < 0 else f"driver exited with {code}{where}"


def devices(config: RuntimeConfig) -> dict:
    """Drivers and devices the loader sees (the child's `devices` answer), or raises ToolchainError."""
    messages, code, timed_out = _spawn({"action": "devices"}, config)
    return _final(messages, code, timed_out, config)


def sycl_devices() -> list[dict] | None:
    """The SYCL devices dpctl sees, or None when dpctl is not installed (asked in a child process:
    a SYCL runtime may crash, and the OpenCL CPU runtime must be pointed at first)."""
    from ..toolchain.runtimes import runtime_env

    code = ("import json, dpctl\nprint(json.dumps([{'filter': d.filter_string, 'name': d.name, "
            "'driver': d.driver_version} for d in dpctl.get_devices()]))")
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                              env=runtime_env())
    except subprocess.TimeoutExpired:
        return []
    if "ModuleNotFoundError" in proc.stderr:
        return None
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return []


def _final(messages: list[dict], code: int | None, timed_out: bool, config: RuntimeConfig) -> dict:
    final = next((m for m in reversed(messages) if m.get("kind") in ("result", "error")), None)
    if final is None:
        raise ToolchainError(_crash_text(messages, code, timed_out, config.timeout))
    if final["kind"] == "error":
        raise ToolchainError(final["message"])
    return final


def probe(inputs: list[Input], config: RuntimeConfig) -> RuntimeResult:
    """Reports for every kernel of every module, as zeKernelGetProperties gives them.

    Each module has one of three outcomes: the child crashed or hung (one finding), the
    module did not build (a finding per kernel), or it built (a report per kernel)."""
    result = RuntimeResult()
    for inp in inputs:
        if not inp.kind.loads_on_device:
            raise ToolchainError(f"{inp.path}: the runtime probe builds SPIR-V or zebins, not {inp.kind}")
        data = inp.data
        if inp.kind == InputKind.OPENCL:
            data = _opencl_to_spirv(inp, config.build_flags, config.timeout, config.environment)
        request = {"action": "probe", "format": "native" if inp.kind == InputKind.ZEBIN else "spirv",
                   "module": data.hex(), "flags": config.build_flags, "device": config.device,
                   "kernels": list(config.kernels)}
        messages, code, timed_out = _spawn(request, config)
        final = next((m for m in reversed(messages) if m.get("kind") in ("result", "error")), None)
        if final is not None and final["kind"] == "error":
            raise ToolchainError(final["message"])
        info = next((m for m in messages if m.get("kind") == "device"), {})
        result.device, result.driver = info.get("device", {}), info.get("driver", {})
        target = config.simulate or info.get("device", {}).get("name", "device")
        ip = info.get("device", {}).get("ip_version") or (SIMULATED[config.simulate][3] if config.simulate else None)
        base: dict[str, Any] = dict(input=inp.path, target=target, ip=ip, shape=DEFAULT_SHAPE, source=Source.RUNTIME,
                                    compiler="level-zero driver " + driver_version_text(
                                        info.get("driver", {}).get("version")),
                                    scratch_limit_bytes=scratch_limit_for_ip(ip) if ip else None)
        extra = {"device": result.device, "driver": result.driver}
        if final is None:
            text = _crash_text(messages, code, timed_out, config.timeout)
            result.incidents.append(f"{inp.path}: {text}")
            result.reports.append(_crash_report(messages, text, base, extra))
        elif final.get("module_error"):
            result.reports += _module_error_reports(final, data if request["format"] == "spirv" else None, inp.path,
                                                    base, extra)
        else:
            result.reports += _built_reports(final, inp.path, ip, base, extra, result.incidents)
    return result


def _crash_report(messages: list[dict], text: str, base: dict[str, Any], extra: dict) -> KernelReport:
    """The driver crashed or hung: a finding for whatever kernel was in flight."""
    step: dict = next((m for m in reversed(messages) if m.get("kind") == "step"), {})
    return KernelReport(kernel=step.get("kernel") or WHOLE_MODULE, status=Status.BUILD_FAILED, reason=text, extra=extra, **base)


def _module_error_reports(final: dict, spirv: bytes | None, path: str, base: dict[str, Any],
                          extra: dict) -> list[KernelReport]:
    """zeModuleCreate failed: a finding for each kernel the module holds."""
    err = final["module_error"]
    names = final.get("kernel_names") or []
    if not names and spirv is not None:
        from ..inputs.spirv import read_module

        try:
            names = read_module(spirv, path).kernel_names()
        except Exception:  # noqa: BLE001 - unreadable SPIR-V: one report for the module
            names = []
    log = tuple(final.get("build_log", "").splitlines()[-20:])
    return [KernelReport(kernel=name, status=Status.BUILD_FAILED, reason=f"{err['call']} returned {err['name']}",
                         log=log, extra=extra | {"results": {err["call"]: err["name"]}}, **base)
            for name in names or [WHOLE_MODULE]]


def _built_reports(final: dict, path: str, ip: str | None, base: dict[str, Any], extra: dict,
                   incidents: list[str]) -> list[KernelReport]:
    """The module built: each kernel's properties, cross-checked with the driver's native binary."""
    from ..inputs.buildlog import LogEventKind, parse_log
    from ..inputs.buildlog import kernel_matches as log_names

    build_log = final.get("build_log", "")
    native = bytes.fromhex(final["native_binary"]) if final.get("native_binary") else b""
    derived = {}
    if native:
        try:
            derived = {k.name: k for k in _native_figures(native, path, ip)}
        except Exception as exc:  # noqa: BLE001 - a binary we cannot read only loses the cross-check
            incidents.append(f"{path}: cannot read the driver's native binary: {exc}")
    spilled = {ev.kernel: ev.spilled_regs for ev in parse_log(build_log) if ev.kind == LogEventKind.SPILL and ev.kernel}
    out = []
    for k in final["kernels"]:
        name = k["name"]
        if k.get("error"):
            status = Status.SCRATCH_OVERFLOW if k["error"]["name"] == "ZE_RESULT_ERROR_INVALID_NATIVE_BINARY" \
                else Status.BUILD_FAILED
            out.append(KernelReport(kernel=name, status=status, reason=f"{k['error']['call']} returned {k['error']['name']}",
                                    extra=extra | {"results": {k["error"]["call"]: k["error"]["name"]}}, **base))
            continue
        p = k["properties"]
        notes = []
        fig = derived.get(name)
        if fig is not None:
            for label, runtime_value, binary_value in (
                    ("spillMemSize", p["spillMemSize"], fig.spill_bytes),
                    ("privateMemSize", p["privateMemSize"], fig.private_bytes),
                    ("maxSubgroupSize", p["maxSubgroupSize"], fig.simd)):
                if runtime_value != binary_value:
                    notes.append(f"{label} {runtime_value} differs from the native binary's .ze_info ({binary_value})")
        out.append(KernelReport(
            # A driver without the register-file extension (Debian 12's) does not say the GRF
            # count; its own native binary does, and occupancy needs it.
            kernel=name, status=Status.OK, simd=p["maxSubgroupSize"],
            grf=p["registerFileSize"] or (fig.grf if fig else None),
            spill_bytes=p["spillMemSize"], private_bytes=p["privateMemSize"], slm_bytes=p["localMemSize"],
            scratch_space_bytes=fig.scratch_space_bytes if fig else None,
            log_spilled_regs=next((v for k2, v in spilled.items() if log_names(k2, name)), None),
            required_sub_group_size=p["requiredSubgroupSize"] or None,
            log=tuple(line for line in build_log.splitlines() if name in line),
            notes=tuple(notes),
            extra=extra | {"properties": p, "native_binary_figures": None if fig is None else {
                "spill_bytes": fig.spill_bytes, "private_bytes": fig.private_bytes, "simd": fig.simd,
                "grf": fig.grf, "slm_bytes": fig.slm_bytes}}, **base))
    return out


def _native_figures(native: bytes, path: str, ip: str | None) -> Any:
    """Kernel figures from the driver's own native binary: a zebin, or patch tokens from old drivers."""
    from ..inputs.patchtokens import is_patchtoken_binary, read_patchtoken_binary
    from ..inputs.zebin import read_zebin

    what = f"{path} (native binary from the driver)"
    if is_patchtoken_binary(native):
        return read_patchtoken_binary(native, what)[1]
    return read_zebin(native, what, target_ip=ip).kernels


def _opencl_to_spirv(inp: Input, options: str, timeout: float | None, environment: tuple = ()) -> bytes:
    from ..cache import BuildCache
    from ..errors import ToolchainError as _T
    from ..paths import build_cache_dir
    from ..toolchain.compilers import discover
    from ..toolchain.front_end import to_spirv

    compilers = discover()
    if not compilers:
        raise _T(f"{inp.path}: OpenCL C needs ocloc to become SPIR-V first, and none is installed")
    c = compilers[0]
    ip = next((ip for name, ips in c.ip_map if name == "tgllp" for ip in ips), None) or "12.0.0"
    return to_spirv(inp, c, ip, BuildCache(build_cache_dir()), timeout, options,
                    compiler_environment.for_compiler(environment))


# -- the child ---------------------------------------------------------------------------

def _say(kind: str, **fields: Any) -> None:
    print(json.dumps({"kind": kind, **fields}), flush=True)


def _child() -> None:
    from .levelzero import LevelZero, LoaderMissing, ZeError, driver_library_present

    request = json.loads(sys.stdin.read())
    try:
        ze = LevelZero()
    except LoaderMissing as exc:
        _say("error", message=f"{exc} (set ZEINSPECT_ZE_LOADER, or install Debian's libze1)")
        return
    current: dict[str, str | None] = {"kernel": None}
    with ze:
        ze.on_step = lambda call: _say("step", call=call, kernel=current["kernel"])
        if not driver_library_present():
            _say("error", message="no Level Zero driver is installed (Debian: intel-opencl-icd ships libze_intel_gpu.so.1)")
            return
        try:
            ze.init()
        except ZeError as exc:
            _say("error", message=f"no Level Zero device: zeInit returned {exc.name} (no Intel GPU here? "
                                  "--simulate PRODUCT runs the driver without one)")
            return
        drivers = ze.drivers()
        listing = []
        for index, drv in enumerate(drivers):
            devices: list[dict] = []
            entry = {"index": index, "version": ze.driver_version(drv), "devices": devices}
            for dev in ze.devices(drv):
                devices.append(ze.device_info(dev).to_json())
            listing.append(entry)
        all_devices = [(d, dev) for d in drivers for dev in ze.devices(d)]
        if not all_devices:
            _say("error", message="no Level Zero device: the driver found none")
            return
        if request["action"] == "devices":
            _say("result", drivers=listing)
            return
        index = request.get("device", 0)
        if index >= len(all_devices):
            _say("error", message=f"no device {index}: {len(all_devices)} device(s) found")
            return
        drv, dev = all_devices[index]
        info = ze.device_info(dev)
        _say("device", device=info.to_json(), driver={"version": ze.driver_version(drv)})
        ctx = ze.context(drv)
        data = bytes.fromhex(request["module"])
        fmt = 1 if request["format"] == "native" else 0
        try:
            module, log = ze.module(ctx, dev, data, fmt, request.get("flags", ""))
        except ZeError as exc:
            names: list[str] = []
            _say("result", module_error={"call": exc.call, "name": exc.name}, build_log=exc.build_log,
                 kernel_names=names)
            return
        names = ze.kernel_names(module)
        wanted = request.get("kernels") or names
        kernels = []
        for name in names:
            if name not in wanted:
                continue
            current["kernel"] = name
            try:
                kernels.append({"name": name, "properties": ze.kernel_properties(module, name)})
            except ZeError as exc:
                kernels.append({"name": name, "error": {"call": exc.call, "name": exc.name}})
        current["kernel"] = None
        try:
            native = ze.native_binary(module).hex()
        except ZeError:
            native = ""
        _say("result", kernels=kernels, build_log=log, native_binary=native)


if __name__ == "__main__":
    _child()
