"""Build SYCL-AOT-like host files from real tools, the way the SYCL toolchain lays them out.

No icpx here, so: real zebins, fat binaries and SPIR-V from ocloc; real LLVM offload tools
(Debian 12's clang-offload-packager-15 and clang-15's -fembed-offload-object for the new
model's version 1; llvm-offload-binary from Debian unstable's LLVM 23 for version 2);
`objcopy --add-section` for old-model bundle sections (LLVM 15's bundler refuses the sycl
kind and the spir64_gen triple); zstd from the zstandard library; and a real assembly and
link by the system compiler for .tgtimg records in objects, PIE executables and shared
objects.  Everything is generated during the test run.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import zstandard

NATIVE = "__CLANG_OFFLOAD_BUNDLE__sycl-spir64_gen-unknown-unknown"
SPIRV = "__CLANG_OFFLOAD_BUNDLE__sycl-spir64-unknown-unknown"


def run(argv, cwd):
    subprocess.run([str(a) for a in argv], check=True, capture_output=True, cwd=cwd)


def device_images(compiler, source: Path, tmp: Path) -> dict[str, bytes]:
    """A zebin for dg2-g10, an ocloc fat binary for tgllp and mtl-u, the module's SPIR-V."""
    out = {}
    run([compiler.path, "compile", "-file", source, "-device", "dg2-g10", "-out_dir", tmp / "z", "-output", "k"], tmp)
    out["zebin"] = next((tmp / "z").glob("*.bin")).read_bytes()
    run([compiler.path, "compile", "-file", source, "-device", "tgllp,mtl-u", "-out_dir", tmp / "f", "-output", "k"],
        tmp)
    out["fatbin"] = next(p for p in (tmp / "f").iterdir() if p.read_bytes()[:8] == b"!<arch>\n").read_bytes()
    run([compiler.path, "compile", "-file", source, "-device", "tgllp", "-spv_only", "-out_dir", tmp / "s",
         "-output", "k"], tmp)
    out["spirv"] = next((tmp / "s").glob("*.spv")).read_bytes()
    return out


def zstd(data: bytes) -> bytes:
    return zstandard.ZstdCompressor(level=3).compress(data)


def end_to_end(parts: list[bytes]) -> bytes:
    """Images one after another, each followed by zero padding to a 16-byte boundary."""
    out = b""
    for part in parts:
        out += part
        out += b"\0" * ((-len(out)) % 16 + 16)
    return out


def host_object(tmp: Path, name: str = "host") -> Path:
    src = tmp / f"{name}.c"
    src.write_text(f"int {name}_entry(void) {{ return 42; }}\n")
    run(["gcc", "-c", src, "-o", tmp / f"{name}.o"], tmp)
    return tmp / f"{name}.o"


def old_model_object(tmp: Path, images: dict[str, bytes], name: str = "old", compress: bool = False) -> Path:
    host = host_object(tmp, name + "_host")
    native = [images["zebin"], images["fatbin"]]
    if compress:
        native = [zstd(x) for x in native]
    (tmp / f"{name}.native").write_bytes(end_to_end(native))
    (tmp / f"{name}.spirv").write_bytes(end_to_end([zstd(images["spirv"]) if compress else images["spirv"]]))
    out = tmp / f"{name}.o"
    run(["objcopy", f"--add-section={NATIVE}={tmp / (name + '.native')}",
         f"--add-section={SPIRV}={tmp / (name + '.spirv')}", host, out], tmp)
    return out


def package_v1(tmp: Path, images: dict[str, bytes], compress: bool = False) -> Path:
    """LLVM 15's clang-offload-packager: one version-1 OffloadBinary per image."""
    files = {}
    for kind, data in images.items():
        path = tmp / f"pkg-{kind}.img"
        path.write_bytes(zstd(data) if compress else data)
        files[kind] = path
    out = tmp / "pkg-v1.bin"
    run(["clang-offload-packager-15", "-o", out,
         f"--image=file={files['zebin']},triple=spir64_gen-unknown-unknown,arch=dg2-g10,kind=sycl",
         f"--image=file={files['fatbin']},triple=spir64_gen-unknown-unknown,arch=tgllp+mtl-u,kind=sycl",
         f"--image=file={files['spirv']},triple=spir64-unknown-unknown,arch=,kind=sycl"], tmp)
    return out


def package_v2(tmp: Path, images: dict[str, bytes], llvm_root: Path) -> Path:
    """LLVM 23's llvm-offload-binary (Debian unstable): one version-2 blob with every entry."""
    libdir = llvm_root / "usr" / "lib" / "x86_64-linux-gnu"
    tool = next((llvm_root / "usr" / "lib").glob("llvm-*/bin/llvm-offload-binary"))
    llvm_lib = tool.parent.parent / "lib"
    for kind, data in images.items():
        (tmp / f"v2-{kind}.img").write_bytes(data)
    out = tmp / "pkg-v2.bin"
    run([libdir / "ld-linux-x86-64.so.2", "--library-path", f"{libdir}:{llvm_lib}", tool, "-o", out,
         f"--image=file={tmp / 'v2-zebin.img'},triple=spir64_gen-unknown-unknown,arch=dg2-g10,kind=sycl",
         f"--image=file={tmp / 'v2-spirv.img'},triple=spir64-unknown-unknown,arch=generic,kind=sycl"], tmp)
    return out


def new_model_object(tmp: Path, package: Path, name: str = "new") -> Path:
    """clang-15 embeds the packaged blob in .llvm.offloading, as the new driver does."""
    src = tmp / f"{name}.c"
    src.write_text(f"int {name}_entry(void) {{ return 7; }}\n")
    out = tmp / f"{name}.o"
    run(["clang-15", "-c", src, "-o", out, "-Xclang", f"-fembed-offload-object={package}"], tmp)
    return out


def tgtimg_assembly(tmp: Path, images: dict[str, bytes], name: str) -> Path:
    """Images in bundle sections plus one {addr, size} .tgtimg record each, as assembly."""
    lines = []
    for i, (kind, data) in enumerate(images.items()):
        path = tmp / f"{name}-{i}.img"
        path.write_bytes(data)
        section = SPIRV if kind == "spirv" else NATIVE
        lines += [f'.section {section},"a"', ".p2align 4", f"img{i}:", f'.incbin "{path}"', f"img{i}_end:"]
    lines += ['.section .tgtimg,"aw"', ".p2align 3"]
    for i in range(len(images)):
        lines += [f".quad img{i}", f".quad img{i}_end - img{i}"]
    lines += [".text", f".globl {name}_entry", f"{name}_entry:", "ret", '.section .note.GNU-stack,"",@progbits']
    asm = tmp / f"{name}.s"
    asm.write_text("\n".join(lines) + "\n")
    return asm


def linked(tmp: Path, images: dict[str, bytes], kind: str) -> Path:
    """A real link by the system compiler: `pie` executable, `shared` object, or `object`."""
    asm = tgtimg_assembly(tmp, images, f"linked_{kind}")
    main = tmp / "main.c"
    main.write_text("int main(void) { return 0; }\n")
    if kind == "object":
        out = tmp / "tgt.o"
        run(["gcc", "-c", asm, "-o", out], tmp)
    elif kind == "pie":
        out = tmp / "app"
        run(["gcc", "-pie", "-fPIE", main, asm, "-o", out], tmp)
    else:
        out = tmp / "libfoo.so"
        run(["gcc", "-shared", "-fPIC", asm, "-o", out], tmp)
    return out


def static_archive(tmp: Path, objects: list[Path]) -> Path:
    out = tmp / "libkernels.a"
    run(["ar", "rcs", out, *objects], tmp)
    return out


def spirv_of(compiler, source: Path, tmp: Path, device: str = "bmg-g21") -> bytes:
    """OpenCL C to SPIR-V by ocloc's front end (for a device whose extensions the source needs)."""
    out = tmp / f"spv-{source.stem}"
    run([compiler.path, "compile", "-file", source, "-device", device, "-spv_only", "-out_dir", out, "-output", "k"],
        tmp)
    return next(out.glob("*.spv")).read_bytes()


def sycl_library(tmp: Path, images: list[dict], name: str = "libsycl", compress: bool = False) -> Path:
    """A shared object laid out as the SYCL toolchain lays out an old-model library: SPIR-V
    images in a bundle section, a .tgtimg record each, and the runtime's device-binary
    descriptor of each image (version 3, 80 bytes: kind 4, target spec, compile and link
    options, binary start/end, offload entries, property sets) in .data.rel.ro, linked by
    the system compiler so every pointer is an R_X86_64_RELATIVE relocation.

    With `compress`, as clang-offload-wrapper's --offload-compress writes them
    (ClangOffloadWrapper.cpp createBinDesc, docs/how-it-works.md#compressed-images): each
    image one zstd frame with its content size, the descriptor's BinaryStart..BinaryEnd around
    the compressed bytes, its Format 4 (compressed_none), and its .tgtimg record giving the
    image's size *before* compression.

    Each image is a dict: data (bytes), entries (kernel names), spec (its target spec: `spir64`,
    the default, or `spir64_gen` for a native image, stored in the native bundle section),
    compile_target (a native image's device, as `-fsycl-targets=intel_gpu_bmg_g21` records it),
    compile_options, link_options, aspects (SYCL aspect numbers for `SYCL/device requirements`); `stored`: the
    bytes to store in its place (a damaged frame), its record still giving len(data)."""
    lines = ['.section .rodata', 'spec: .asciz "spir64"', 'spec_gen: .asciz "spir64_gen"',
             'set_req: .asciz "SYCL/device requirements"',
             'set_misc: .asciz "SYCL/misc properties"', 'p_aspects: .asciz "aspects"',
             'p_target: .asciz "compile_target"', 'p_opt: .asciz "optLevel"']
    for i, img in enumerate(images):
        path = tmp / f"{name}-{i}.spv"
        stored = img.get("stored") or (zstandard.ZstdCompressor(level=10).compress(img["data"]) if compress
                                       else img["data"])
        path.write_bytes(stored)
        copts = img.get("compile_options", "").replace('"', '\\"')
        lopts = img.get("link_options", "").replace('"', '\\"')
        lines += [f'copts{i}: .asciz "{copts}"', f'lopts{i}: .asciz "{lopts}"']
        lines += [f'ename{i}_{j}: .asciz "{e}"' for j, e in enumerate(img["entries"])]
    for i, img in enumerate(images):
        section = NATIVE if img.get("spec") == "spir64_gen" else SPIRV
        lines += [f'.section {section},"a"', ".p2align 4", f"img{i}:", f'.incbin "{tmp / f"{name}-{i}.spv"}"',
                  f"img{i}_end:"]
    lines += ['.section .data.rel.ro,"aw"', ".p2align 4"]
    for i, img in enumerate(images):
        aspects = img.get("aspects", [])
        native = img.get("spec") == "spir64_gen"
        # Format: 2 SPIR-V, 1 native; 4 compressed (compressed_none).
        lines += [f"desc{i}:", ".short 3", ".byte 4", f".byte {4 if compress else 1 if native else 2}", ".long 0",
                  f".quad {'spec_gen' if native else 'spec'}",
                  f".quad copts{i}",
                  f".quad lopts{i}", f".quad img{i}", f".quad img{i}_end", f".quad ent{i}", f".quad ent{i}_end",
                  f".quad sets{i}", f".quad sets{i}_end"]
        lines += [f"ent{i}:"] + [x for j in range(len(img["entries"]))
                                 for x in (".quad 0", f".quad ename{i}_{j}", ".quad 0", ".long 0", ".long 0")]
        lines += [f"ent{i}_end:", f"sets{i}:", ".quad set_req", f".quad req{i}", f".quad req{i}_end",
                  ".quad set_misc", f".quad misc{i}", f".quad misc{i}_end", f"sets{i}_end:"]
        target = img.get("compile_target")
        lines += [f"req{i}:", ".quad p_aspects", f".quad aval{i}", ".long 2", ".long 0", f".quad {8 + 4 * len(aspects)}"]
        if target:  # a byte array: its size in bits, then the name (what -fsycl-targets=intel_gpu_* records)
            lines += [".quad p_target", f".quad tval{i}", ".long 2", ".long 0", f".quad {8 + len(target)}"]
        lines += [f"req{i}_end:", f"misc{i}:", ".quad p_opt", ".quad 0", ".long 1", ".long 0", ".quad 2",
                  f"misc{i}_end:", f"aval{i}:", f".quad {32 * len(aspects)}"] + [f".long {a}" for a in aspects]
        if target:
            lines += [f"tval{i}:", f".quad {8 * len(target)}", f'.ascii "{target}"']
    lines += ['.section .tgtimg,"aw"', ".p2align 3"]
    for i, img in enumerate(images):
        lines += [f".quad img{i}", f".quad {len(img['data'])}" if compress else f".quad img{i}_end - img{i}"]
    lines += ['.section .note.GNU-stack,"",@progbits']
    asm = tmp / f"{name}.s"
    asm.write_text("\n".join(lines) + "\n")
    out = tmp / f"{name}.so"
    run(["gcc", "-shared", "-fPIC", asm, "-o", out], tmp)
    return out


def run_status(argv, cwd) -> int:
    """The exit code of a tool run (for checks that expect a failure)."""
    return subprocess.run([str(a) for a in argv], capture_output=True, cwd=cwd).returncode
