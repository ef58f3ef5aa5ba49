"""The SYCL runtime's rules for an image: aspect numbering per ABI, device requirements, build options.

Each expectation is the rule as the runtime's source states it (intel/llvm
program_manager.cpp: checkDevSupportDeviceRequirements, appendCompileOptionsFromImage,
appendCompileOptionsForGRFSizeProperties; the Level Zero adapter's urPlatformGetBackendOption);
the device's capabilities are stubbed, since what is under test is the rule, not the compiler.
"""

from __future__ import annotations

import struct

import pytest

from zeinspect.inputs import sycl_aspects
from zeinspect.inputs.buildlog import compiler_lines, parse_log
from zeinspect.inputs.sycl_image import ImageInfo, aspect_label, aspect_name, options_for_target
from zeinspect.inputs.zeinfo import derive_kernels
from zeinspect.toolchain import requirements

from ..fakes import FAKE_COMPILER


def _u32s(*values: int) -> bytes:
    return struct.pack(f"<{len(values)}I", *values)


def image(*, aspects=(), sub_group=None, esimd=False, abi=9, misc=None, extra=None) -> ImageInfo:
    reqs: dict = {"aspects": _u32s(*aspects)}
    if sub_group is not None:
        reqs["reqd_sub_group_size"] = sub_group
    reqs.update(extra or {})
    props = {"SYCL/device requirements": reqs, "SYCL/misc properties": {"optLevel": 3, **(misc or {})}}
    if esimd:
        props["SYCL/misc properties"]["isEsimdImage"] = 1
    return ImageInfo(target_spec="spir64", entries=("k",), properties=props, sycl_abi=abi)


# -- aspect numbering -------------------------------------------------------------------------

def test_aspect_numbers_follow_the_abi_that_built_the_image():
    # libsycl.so.8 and .9 number atomic64 differently: the generated tables must say so.
    assert aspect_name(28, 8) == "atomic64" and aspect_name(27, 9) == "atomic64"
    assert aspect_name(28, 9) == "ext_intel_device_info_uuid"
    assert aspect_name(73, 9) == "ext_oneapi_atomic16" and aspect_name(73, 8) != "ext_oneapi_atomic16"


def test_an_unknown_abi_names_only_what_every_known_abi_agrees_on():
    agreed = [n for n in range(200) if len({t.get(n) for t in sycl_aspects.ASPECTS.values()}) == 1
              and all(n in t for t in sycl_aspects.ASPECTS.values())]
    assert 6 in agreed and 27 not in agreed
    assert aspect_name(6, None) == "fp64"
    assert aspect_name(27, None) is None
    assert "unknown" in aspect_label(27, None) and "27" in aspect_label(27, None)
    assert aspect_name(5000, 9) is None and "libsycl.so.9" in aspect_label(5000, 9)


# -- device requirements ----------------------------------------------------------------------

@pytest.fixture
def device(monkeypatch):
    """A target whose compiler offers these extensions and sub-group sizes."""
    offered = {"extensions": ("cl_khr_fp16", "cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics",
                              "cl_ext_float_atomics"),
               "sub_groups": (16, 32)}
    monkeypatch.setattr(requirements, "device_extensions", lambda c, ip: offered["extensions"])
    monkeypatch.setattr(requirements, "sub_group_sizes", lambda c, ip: offered["sub_groups"])
    return offered


def _check(info):
    return requirements.check(info, "bmg-g21", "20.1.0", [FAKE_COMPILER])


def test_a_required_sub_group_size_the_target_lacks_is_unmet(device):
    found = _check(image(sub_group=8))
    assert found.unmet == ("reqd_sub_group_size 8 (target offers 16, 32)",)
    assert "never builds" in found.reason
    assert _check(image(sub_group=16)).unmet == ()


def test_esimd_images_are_exempt_from_the_sub_group_check(device):
    # ESIMD images carry reqd_sub_group_size 1, which no device lists.
    assert _check(image(sub_group=1, esimd=True)).unmet == ()
    assert _check(image(sub_group=1)).unmet  # the same size on a non-ESIMD image is unmet


def test_aspects_by_the_extension_the_runtime_asks_for(device):
    assert _check(image(aspects=(6,))).unmet == ("aspect fp64",)  # no cl_khr_fp64 offered
    assert _check(image(aspects=(5, 27))).unmet == ()  # fp16, atomic64 in ABI 9 numbering
    assert _check(image(aspects=(28,), abi=8)).unmet == ()  # atomic64 in ABI 8 numbering
    # atomic16: the runtime asks for cl_ext_float_atomics, which OpenCL lists here but a
    # Level Zero device never does.
    found = _check(image(aspects=(73,)))
    assert found.unmet == ("aspect ext_oneapi_atomic16",) and "Level Zero" in found.reason
    assert _check(image(aspects=(2, 49))).unmet == ()  # gpu, ext_intel_esimd
    assert _check(image(aspects=(1,))).unmet == ("aspect cpu",)


def test_what_cannot_be_decided_offline_is_assumed_met_and_named(device):
    found = _check(image(aspects=(13, 4321), extra={
        "reqd_work_group_size": _u32s(64, 1, 1), "joint_matrix": b"matrix_type::bf16,use::a,8,16\0",
        "some_future_requirement": 1}))
    assert found.unmet == ()
    assert found.unchecked == ("aspect usm_device_allocations", aspect_label(4321, 9),
                               "joint_matrix matrix_type::bf16,use::a,8,16", "requirement some_future_requirement")


def test_a_required_work_group_is_checked_against_the_devices_maximum(device):
    from zeinspect.occupancy import device_max_work_group_size

    most = device_max_work_group_size("20.1.0")  # the IP _check asks for (bmg-g21)
    assert _check(image(extra={"reqd_work_group_size": _u32s(most, 1, 1)})).unmet == ()
    found = _check(image(extra={"reqd_work_group_size": _u32s(most, 2, 1)}))
    assert found.unmet == (f"reqd_work_group_size {most}x2x1 (target offers at most {most} work-items)",)


def test_a_compiler_that_cannot_say_leaves_the_requirement_unchecked(monkeypatch):
    monkeypatch.setattr(requirements, "device_extensions", lambda c, ip: None)
    monkeypatch.setattr(requirements, "sub_group_sizes", lambda c, ip: None)
    found = _check(image(aspects=(6,), sub_group=8))
    assert found.unmet == () and found.unchecked == ("aspect fp64", "reqd_sub_group_size 8")


# -- build options ----------------------------------------------------------------------------

def _options(info: ImageInfo, compile_options="", link_options="", targets=("bmg-g21",)):
    return options_for_target(compile_options, link_options, targets, esimd=info.is_esimd, grf_size=info.grf_size,
                              opt_level=info.opt_level)[0]


def test_opt_level_becomes_the_level_zero_spelling_except_for_esimd():
    assert _options(image()) == ["-ze-opt-level=2"]
    assert _options(image(misc={"optLevel": 0})) == ["-ze-opt-disable"]
    assert _options(image(esimd=True)) == ["-vc-codegen"]  # VC refuses -ze-opt-level


def test_grf_size_property_selects_the_register_file_for_each_back_end():
    assert _options(image(esimd=True, misc={"sycl-grf-size": 256})) == ["-vc-codegen", "-doubleGRF"]
    assert _options(image(misc={"sycl-grf-size": 256})) == ["-ze-opt-level=2", "-ze-opt-large-register-file"]
    assert _options(image(misc={"sycl-grf-size": 0})) == ["-ze-opt-level=2", "-ze-intel-enable-auto-large-GRF-mode"]
    assert _options(image(misc={"sycl-register-alloc-mode": 2})) == ["-ze-opt-level=2",
                                                                      "-ze-opt-large-register-file"]
    assert image(misc={"sycl-grf-size": 128}).grf_size is None


def test_front_end_options_take_the_backends_spelling_and_link_options_come_last():
    out = _options(image(), "-ftarget-compile-fast -foffload-fp32-prec-div -g", "-cl-fast-relaxed-math")
    assert out == ["-igc_opts", "PartitionUnit=1,SubroutineThreshold=50000", "-ze-fp32-correctly-rounded-divide-sqrt",
                   "-g", "-ze-opt-level=2", "-cl-fast-relaxed-math"]
    alloc = "-ftarget-register-alloc-mode=pvc:-ze-intel-enable-auto-large-GRF-mode"
    assert _options(image(), alloc, targets=("pvc",)) == ["-ze-intel-enable-auto-large-GRF-mode", "-ze-opt-level=2"]
    assert _options(image(), alloc) == ["-ze-opt-level=2"]


# -- the VC back end's scratch ----------------------------------------------------------------

def _zeinfo(env_extra: dict, buffers: list) -> dict:
    return {"version": "1.73", "kernels": [{"name": "k", "execution_env": {"simd_size": 1, "grf_count": 128,
                                                                             **env_extra},
                                            "per_thread_memory_buffers": buffers}]}


def test_vc_single_space_scratch_is_spill():
    _, [k] = derive_kernels(_zeinfo({}, [{"type": "scratch", "usage": "single_space", "size": 6848}]),
                            xe_hp_or_later=True)
    assert k.spill_bytes == 6848 and k.private_bytes == 0 and any("VC" in n for n in k.notes)


def test_igc_scratch_with_its_own_spill_size_is_unchanged():
    _, [k] = derive_kernels(_zeinfo({"spill_size": 128, "private_size": 64},
                                    [{"type": "scratch", "usage": "single_space", "size": 192}]), xe_hp_or_later=True)
    assert (k.spill_bytes, k.private_bytes) == (128, 64)


def test_the_vc_finalizers_spill_line_is_read_in_bytes():
    [ev] = parse_log("Spill memory used = 2560 bytes for kernel _ZTSN6oneapi3mkl3fooE\n"
                     " Compiling kernel with spill code may degrade performance.\n")
    assert (ev.kind, ev.kernel, ev.spill_bytes) == ("spill", "_ZTSN6oneapi3mkl3fooE", 2560)


def test_a_failed_build_keeps_the_compilers_own_words():
    log = ("Compilation from IR - skipping loading of FCL\n"
           "InvalidModule: Invalid SPIR-V module: input SPIR-V module uses extension "
           "'SPV_EXT_shader_atomic_float16_add' which were disabled by --spirv-ext option\n\n"
           "Build failed with error code: -11\nCommand was: ocloc compile ...\n")
    assert compiler_lines(log) == ["InvalidModule: Invalid SPIR-V module: input SPIR-V module uses extension "
                                   "'SPV_EXT_shader_atomic_float16_add' which were disabled by --spirv-ext option"]


def _under(environment: dict, info: ImageInfo, compile_options="", link_options="", targets=("bmg-g21",)):
    return options_for_target(compile_options, link_options, targets, esimd=info.is_esimd, grf_size=info.grf_size,
                              opt_level=info.opt_level, environment=tuple(environment.items()))


def test_sycl_program_compile_options_replace_the_images_and_drop_its_opt_level():
    """ProgramManager: applyOptionsFromEnvironment replaces the image's compile options, and
    appendCompileOptionsFromImage adds no optLevel option when the variable is set; ESIMD's
    -vc-codegen and the register-file property stay, and the translations apply to its words."""
    plain, notes = _under({}, image(), "-DIMAGE")
    assert plain == ["-DIMAGE", "-ze-opt-level=2"] and not notes
    got, notes = _under({"SYCL_PROGRAM_COMPILE_OPTIONS": "-DENV -ftarget-register-alloc-mode=pvc:-ze-x"},
                        image(misc={"sycl-grf-size": 256}), "-DIMAGE", targets=("pvc",))
    assert got == ["-DENV", "-ze-x", "-ze-opt-large-register-file"]
    assert any("replaces the image's compile options (-DIMAGE)" in n for n in notes)
    got, _ = _under({"SYCL_PROGRAM_COMPILE_OPTIONS": "-DENV"}, image(esimd=True), "-DIMAGE")
    assert got == ["-DENV", "-vc-codegen"]


def test_the_append_forms_come_last_untranslated_and_link_options_are_replaced():
    env = {"SYCL_PROGRAM_APPEND_COMPILE_OPTIONS": "-ftarget-compile-fast", "SYCL_PROGRAM_LINK_OPTIONS": "-L1",
           "SYCL_PROGRAM_APPEND_LINK_OPTIONS": "-L2"}
    got, _ = _under(env, image(misc={"optLevel": 0}), "-DIMAGE", "-LIMAGE")
    # "Should always come last": after the image's (translated) options and the link options.
    assert got == ["-DIMAGE", "-ze-opt-disable", "-ftarget-compile-fast", "-L1", "-L2"]
