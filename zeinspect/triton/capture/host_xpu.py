"""zeinspect's host XPU: a device `xpu` in a CPU build of torch, whose memory is host memory
and whose operators run on the CPU (a captured command's stand-in, triton.capture.xpu).

Why: a library puts its tensors on `xpu` and a model is moved there before torch.compile;
Dynamo, AOTAutograd and Inductor then trace fake tensors on the device, and run small things
on it for real while they compile (constant folding, the pattern matcher's example tensors,
small constants moved to the device).  A CPU build of torch has no XPU: no device guard, no
accelerator hooks, no allocator, no kernels.  Those are registered here, in a 130 kB library
built once per installed torch with the C++ compiler against torch's own headers, and kept
with zeinspect's toolchains:

- the device guard torch itself registers for CUDA to trace fake CUDA tensors on a CPU-only
  build (c10's NoOpDeviceGuardImpl; `_ensureCUDADeviceGuardSet`), on device 0, with events
  that are always done;
- XPU hooks that say XPU is the accelerator, one device (autograd asks the accelerator for the
  device's current stream when it traces a backward pass); its generators are the CPU's;
- an allocator of host memory, tensors made with it, copies and views as the CPU's own kernels,
  and every other operator through ATen's CPU fallback (inputs to the CPU, outputs back: the
  fallback lazy and XLA tensors use).

Values are computed on the CPU, as before: nothing of Triton's runs (the capture answers its
launches), and nothing Inductor generates runs (triton.capture.inductor).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

BUILD_TIMEOUT_S = 300
"""The C++ compile of the host XPU, once per installed torch: about 8 s on 2 cores."""

SOURCE = r"""// zeinspect's host XPU: a device `xpu` for a CPU build of torch whose memory is host memory
// and whose operators run on the CPU: a captured command's tensors on xpu, and what
// torch.compile runs on the device while it compiles (constant folding, pattern tracing).
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/EmptyTensor.h>
#include <ATen/detail/XPUHooksInterface.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
namespace {
constexpr c10::DeviceType kXPU = c10::DeviceType::XPU;

// The device guard torch registers for CUDA to trace fake tensors on a CPU-only build (c10's
// no-op guard), on one device, 0 (autograd keeps the caller's stream per device index), with
// events that are always done (autograd orders streams with them).
c10::Stream the_stream() { return c10::Stream(c10::Stream::DEFAULT, c10::Device(kXPU, 0)); }
struct HostXPUGuard final : c10::impl::NoOpDeviceGuardImpl<kXPU> {
  c10::Device exchangeDevice(c10::Device) const override { return c10::Device(kXPU, 0); }
  c10::Device getDevice() const override { return c10::Device(kXPU, 0); }
  c10::Stream getStream(c10::Device) const noexcept override { return the_stream(); }
  c10::Stream getNewStream(c10::Device, int) const override { return the_stream(); }
  c10::Stream exchangeStream(c10::Stream) const noexcept override { return the_stream(); }
  void record(void**, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {}
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  void synchronizeEvent(void*) const override {}
  void synchronizeStream(const c10::Stream&) const override {}
};

// What autograd asks of the accelerator when it traces tensors on it (InputBuffer::add asks for
// the device's current stream): XPU, one device; its generators are the CPU's.
struct HostXPUHooks final : at::XPUHooksInterface {
  void init() const override {}
  bool hasXPU() const override { return true; }
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  c10::DeviceIndex deviceCount() const override { return 1; }
  c10::DeviceIndex getNumGPUs() const override { return 1; }
  c10::DeviceIndex current_device() const override { return 0; }
  c10::DeviceIndex getCurrentDevice() const override { return 0; }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex) const override { return at::detail::getDefaultCPUGenerator(); }
  at::Generator getNewGenerator(c10::DeviceIndex) const override { return at::detail::createCPUGenerator(); }
  at::Allocator* getPinnedMemoryAllocator() const override { return c10::GetCPUAllocator(); }
};

struct HostXPUAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t n) override {
    c10::DataPtr p = c10::GetCPUAllocator()->allocate(n);
    p.unsafe_set_device(c10::Device(kXPU, 0));
    return p;
  }
  c10::DeleterFnPtr raw_deleter() const override { return c10::GetCPUAllocator()->raw_deleter(); }
  void copy_data(void* dest, const void* src, std::size_t count) const override { std::memcpy(dest, src, count); }
};
HostXPUAllocator allocator;

at::Tensor empty(c10::IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<at::Layout>,
                 std::optional<at::Device>, std::optional<bool>, std::optional<at::MemoryFormat> memory_format) {
  return at::detail::empty_generic(size, &allocator, c10::DispatchKeySet(c10::DispatchKey::XPU),
                                   dtype.value_or(at::get_default_dtype_as_scalartype()), memory_format);
}
at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout>, std::optional<at::Device>, std::optional<bool>) {
  return at::detail::empty_strided_generic(size, stride, &allocator, c10::DispatchKeySet(c10::DispatchKey::XPU),
                                           dtype.value_or(at::get_default_dtype_as_scalartype()));
}
// The same memory seen as a CPU tensor: a copy between the CPU and this device is the CPU's.
at::Tensor as_cpu(const at::Tensor& t) {
  if (t.device().type() != kXPU) return t;
  return at::from_blob(t.data_ptr(), t.sizes(), t.strides(), [](void*) {}, t.options().device(at::kCPU));
}
at::Tensor& copy_(at::Tensor& self, const at::Tensor& src, bool non_blocking) {
  as_cpu(self).copy_(as_cpu(src), non_blocking);
  return self;
}
at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool non_blocking) {
  as_cpu(dst).copy_(as_cpu(self), non_blocking);
  return dst;
}
at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) at::native::resize_(dst, self.sizes());
  as_cpu(dst).copy_(as_cpu(self));
  return dst;
}
void on_the_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack) { at::native::cpu_fallback(op, stack); }
}  // namespace

C10_REGISTER_GUARD_IMPL(XPU, HostXPUGuard)
namespace at {
C10_REGISTER_TYPED_CLASS(XPUHooksRegistry, "XPUHooks", HostXPUHooks)
}  // namespace at

TORCH_LIBRARY_IMPL(aten, XPU, m) {
  m.impl("empty.memory_format", &empty);
  m.impl("empty_strided", &empty_strided);
  m.impl("copy_", &copy_);
  m.impl("_copy_from", &copy_from);
  m.impl("_copy_from_and_resize", &copy_from_and_resize);
  // Views and resizing are the CPU's own kernels: they only read and set sizes and storage.
  m.impl("view", &at::native::view);
  m.impl("as_strided", &at::native::as_strided_tensorimpl);
  m.impl("_reshape_alias", &at::native::_reshape_alias);
  m.impl("unfold", &at::native::unfold);
  m.impl("resize_", &at::native::resize_);
}
// Every other operator: on the CPU (its inputs copied there, its outputs back: ATen's fallback
// for devices without a kernel).
TORCH_LIBRARY_IMPL(_, XPU, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&on_the_cpu>()); }

// Operators whose one kernel serves every device (CompositeExplicitAutograd) and reaches a
// per-device kernel table with no XPU entry in a CPU build (a DispatchStub) go to the CPU too;
// views keep their composite kernel (a copy would not alias), and so do the moves the fallback
// itself makes.  Called once, after torch has registered its operators.
extern "C" int zeinspect_host_xpu_composites() {
  static const std::set<std::string> moves = {"aten::_to_copy", "aten::_to_cpu", "aten::copy_", "aten::to",
      "aten::empty_like", "aten::new_empty", "aten::new_empty_strided", "aten::resize_", "aten::set_",
      "aten::_copy_from", "aten::_copy_from_and_resize", "aten::clone", "aten::contiguous"};
  // Kept for the life of the process and never destroyed: a registration undone while the
  // process exits (static destructors, after torch's own may have run) has nothing to undo it in.
  static auto* libraries = new std::map<std::string, std::unique_ptr<torch::Library>>();
  auto& dispatcher = c10::Dispatcher::singleton();
  int registered = 0;
  for (const auto& name : dispatcher.getAllOpNames()) {
    auto op = dispatcher.findOp(name);
    if (!op || op->hasKernelForDispatchKey(c10::DispatchKey::XPU) || moves.count(name.name)) continue;
    if (!op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) &&
        !op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutogradNonFunctional)) continue;
    bool view = false;
    for (const auto& r : op->schema().returns()) {
      if (r.alias_info() && !r.alias_info()->isWrite()) view = true;
    }
    const auto cut = name.name.find("::");
    if (view || cut == std::string::npos) continue;
    const std::string ns = name.name.substr(0, cut);
    auto& library = (*libraries)[ns];
    if (!library) library = std::make_unique<torch::Library>(torch::Library::IMPL, ns, c10::DispatchKey::XPU, __FILE__, __LINE__);
    const std::string qualified = name.name + (name.overload_name.empty() ? "" : "." + name.overload_name);
    library->impl(qualified.c_str(), torch::CppFunction::makeFromBoxedFunction<&on_the_cpu>());
    ++registered;
  }
  return registered;
}
"""


def register(torch: Any, folder: Path) -> None:
    """The host XPU, built in `folder` (zeinspect's, as the capture is told) if it is not yet for
    this torch, loaded into the process.  Raises OSError or SubprocessError (no C++ compiler, no
    headers): the caller says so and goes on."""
    root = Path(torch.__file__).parent
    lib = root / "lib" / "libc10.so"
    # The build is torch's (its version and library) with this compiler ($CXX, as make has it).
    compiler = os.environ.get("CXX", "c++")
    key = hashlib.sha256(f"{torch.__version__}|{lib}|{lib.stat().st_mtime_ns}|{compiler}|{SOURCE}".encode())
    built = folder / key.hexdigest()[:16] / "libzeinspect_xpu_device.so"
    if not built.exists():
        built.parent.mkdir(parents=True, exist_ok=True)
        try:
            _build(compiler, root, lib, built)
        finally:
            if not built.exists():  # nothing left where the next run looks (another may be building)
                with contextlib.suppress(OSError):
                    built.parent.rmdir()
    # Loaded for good (its kernels and hooks stay registered with torch); the operators whose
    # one kernel serves every device are registered once torch has all of its own.
    ctypes.CDLL(str(built), mode=ctypes.RTLD_GLOBAL).zeinspect_host_xpu_composites()


def _build(compiler: str, root: Path, lib: Path, built: Path) -> None:
    """SOURCE compiled by `compiler` against the headers and libraries of the torch in `root`."""
    with tempfile.TemporaryDirectory(dir=built.parent) as tmp:
        source, out = Path(tmp) / "host_xpu.cpp", Path(tmp) / built.name
        source.write_text(SOURCE)
        proc = subprocess.run([compiler, "-std=c++17", "-O1", "-shared", "-fPIC", f"-I{root / 'include'}",
                               f"-I{root / 'include' / 'torch' / 'csrc' / 'api' / 'include'}", str(source),
                               f"-L{lib.parent}", "-lc10", "-ltorch_cpu", f"-Wl,-rpath,{lib.parent}", "-o",
                               str(out)], capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        if proc.returncode:
            said = [line for line in proc.stderr.splitlines() if "error" in line] or proc.stderr.splitlines()
            raise OSError(f"{compiler} exit {proc.returncode}: {said[0].strip() if said else 'no output'}"[:300])
        os.replace(out, built)  # whole or not at all: another capture may be loading it


def backward_on_the_calling_thread(torch: Any) -> None:
    """Backward passes run on the thread that asks for them, as AOTAutograd has them run while it
    traces.  Otherwise autograd hands a node on the XPU to its worker thread for the device, which
    lets go of the node's tensors after the caller has its gradients; when the command ends right
    then, that thread asks for the GIL while Python finalizes, Python ends the thread
    (pthread_exit) inside code that may not unwind, and the process aborts ("terminate called
    without an active exception", about 1 run in 50 of a backward pass on two busy cores).  It is
    a thread's own setting: this is the main thread's, where a command's backward passes run."""
    torch.autograd.set_multithreading_enabled(False)


def run_attention_as_math(torch: Any) -> None:
    """scaled_dot_product_attention on the host XPU, run eagerly: its math kernel (the one every
    device has).  Its own choice between kernels is made per device in C++ (a DispatchStub that a
    CPU torch has no XPU entry in), so it cannot run here as it is.  While torch.compile traces
    it stays as it is: which kernel a real XPU takes is decided in torch's XPU build, and a guess
    would make Inductor generate kernels the device never runs; Dynamo says so and runs that
    frame uncompiled (triton.capture.inductor)."""
    import torch.nn.functional as F  # noqa: N812 - torch's own name

    original = F.scaled_dot_product_attention

    def attention(query: Any, key: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        if query.device.type != "xpu" or torch.compiler.is_compiling():
            return original(query, key, value, *args, **kwargs)
        names = ("attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
        given = {**dict(zip(names, args)), **kwargs}
        return torch.ops.aten._scaled_dot_product_attention_math(
            query, key, value, given.get("attn_mask"), given.get("dropout_p", 0.0), given.get("is_causal", False),
            scale=given.get("scale"), enable_gqa=given.get("enable_gqa", False))[0]

    F.scaled_dot_product_attention = attention
