"""Run the original and the remedied kernel on the same inputs (judge.equivalence says how a
kernel describes its launch, and holds the outcome).

Both modules run in a child process (`python -m zeinspect.app.equivalence`) with a timeout,
on the OpenCL CPU device through dpctl: a runtime crash is an outcome, not our crash.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..judge.equivalence import Equivalence, Launch
from ..toolchain.runtimes import runtime_env


def compare(original: bytes, remedied: bytes, launch: Launch, *, seed: int = 1234, timeout: float = 300) -> Equivalence:
    """Run both modules in a child process (a runtime crash is an outcome, not our crash)."""
    with tempfile.TemporaryDirectory(prefix="zeinspect-eq-") as tmp:
        a, b = Path(tmp) / "a.spv", Path(tmp) / "b.spv"
        a.write_bytes(original)
        b.write_bytes(remedied)
        request = {"a": str(a), "b": str(b), "kernel": launch.kernel, "global": launch.global_size,
                   "local": launch.local_size, "args": launch.args, "seed": seed}
        try:
            proc = subprocess.run([sys.executable, "-m", "zeinspect.app.equivalence"], input=json.dumps(request),
                                  capture_output=True, text=True, timeout=timeout, env=runtime_env(), cwd=tmp)
        except subprocess.TimeoutExpired:
            return Equivalence(False, f"the run on the CPU device timed out after {timeout:.0f} s")
    if proc.returncode < 0:
        return Equivalence(False, f"the CPU runtime crashed (signal {-proc.returncode})")
    try:
        return Equivalence.from_json(json.loads(proc.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError, TypeError):
        return Equivalence(False, "the runner gave no answer: " + " ".join(proc.stderr.split())[-300:])


def _child() -> None:  # runs in its own process: python -m zeinspect.app.equivalence
    request = json.loads(sys.stdin.read())
    try:
        import ctypes

        import dpctl
        import dpctl.memory as dpm
        import dpctl.program as dpp
        import numpy as np
    except ImportError as exc:
        print(json.dumps({"ran": False, "why": f"not executable here: {exc.name} is not installed"}))
        return
    try:
        queue = dpctl.SyclQueue("opencl:cpu")
    except Exception:  # noqa: BLE001 - dpctl raises its own types for "no such device"
        print(json.dumps({"ran": False, "why": "not executable here: no OpenCL CPU device"}))
        return
    dtypes = {"float": np.float32, "int": np.int32, "uint": np.uint32}
    scalars: dict[str, type] = {"float": ctypes.c_float, "int": ctypes.c_int32, "uint": ctypes.c_uint32}

    def run(path: str) -> Any:
        rng = np.random.default_rng(request["seed"])
        program = dpp.create_program_from_spirv(queue, Path(path).read_bytes())
        kernel = program.get_sycl_kernel(request["kernel"])
        args, outputs = [], []
        for arg in request["args"]:
            if "value" in arg:
                number = float(arg["value"])
                args.append(scalars[arg["type"]](number if arg["type"] == "float" else int(number)))
                continue
            dtype, count, init = dtypes[arg["type"]], arg["count"], arg["init"]
            if init == "random":
                host = rng.random(count).astype(dtype) if arg["type"] == "float" else \
                    rng.integers(0, 1 << 16, count).astype(dtype)
            elif init.startswith("below:"):
                host = rng.integers(0, int(init.split(":")[1]), count).astype(dtype)
            else:
                host = np.zeros(count, dtype)
            mem = dpm.MemoryUSMShared(max(host.nbytes, 1), queue=queue)
            mem.copy_from_host(host.view(np.uint8))
            args.append(mem)
            if init == "output":
                outputs.append((mem, host))
        # Sizes are written in OpenCL order (dimension 0 first); SYCL ranges list the
        # fastest-moving dimension last, so dpctl takes them reversed.
        queue.submit(kernel, args, list(reversed(request["global"])), list(reversed(request["local"]))).wait()
        result = []
        for mem, host in outputs:
            out = np.empty_like(host)
            mem.copy_to_host(out.view(np.uint8))
            result.append(out)
        return result

    try:
        first, second = run(request["a"]), run(request["b"])
    except Exception as exc:  # noqa: BLE001 - a runtime refusal is an answer, not a crash
        print(json.dumps({"ran": False, "why": f"the CPU device refused the module: {exc}"[:400]}))
        return
    bitwise = all(np.array_equal(x, y) for x, y in zip(first, second))
    diffs = [float(np.max(np.abs(x.astype(np.float64) - y.astype(np.float64)))) if x.size else 0.0
             for x, y in zip(first, second)]
    equal = all(np.allclose(x, y, rtol=1e-5, atol=1e-6) for x, y in zip(first, second))
    print(json.dumps({"ran": True, "device": f"opencl:cpu {queue.sycl_device.name}", "equal": bool(equal),
                      "bitwise": bool(bitwise), "max_abs_diff": max(diffs, default=0.0),
                      "outputs_compared": int(sum(x.size for x in first))}))


if __name__ == "__main__":
    _child()
