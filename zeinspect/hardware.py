"""The one table of Intel GPU hardware facts zeinspect keeps, and where each comes from.

What a compiler can say is asked of the compiler (its targets and IP versions from `ocloc
ids`, extensions from `ocloc query`, sub-group sizes from a probe compile); only facts no
compiler prints live here: family ranges of IP versions, the per-thread scratch caps and
register widths NEO and IGC apply, the names of IP versions for binaries read without a
compiler, the zebin note's product families, the driver's hardware-free devices, and the
target lists zeinspect uses by default.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass


@functools.lru_cache(maxsize=256)  # a library audit asks for the same few IPs millions of times
def parse_ip(ip: str) -> tuple[int, int, int]:
    """'12.70.4' -> (12, 70, 4); raises ValueError on anything else."""
    parts = ip.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"not an IP version: {ip!r}")
    return int(parts[0]), int(parts[1]), int(parts[2])


def is_ip(text: str) -> bool:
    try:
        parse_ip(text)
    except ValueError:
        return False
    return True


# -- families ---------------------------------------------------------------------------------

# The GPU families by IP range, ocloc's family names as keys: ((major, minor) lowest, highest).
# Target selection falls back on it when no installed compiler knows a family name (Debian
# 12's ocloc predates `xe-lp`, `xe-lpg` and `xe2`), and reports group by it.
IP_FAMILIES = {
    "xe-lp": ((12, 0), (12, 10)), "gen12lp": ((12, 0), (12, 10)), "xe-hpg": ((12, 55), (12, 57)),
    "xe-hpc": ((12, 60), (12, 61)), "xe-lpg": ((12, 70), (12, 71)), "xe-lpgplus": ((12, 74), (12, 74)),
    "xe2": ((20, 0), (20, 255)), "xe2-hpg": ((20, 1), (20, 2)), "xe2-lpg": ((20, 4), (20, 4)),
    "xe3": ((30, 0), (30, 255)),
}
# The generations a reader knows, in the order reports list them (Xe-LPG+ reads as Xe-LPG).
FAMILY_LABELS = (("xe-lp", "Xe-LP"), ("xe-hpg", "Xe-HPG"), ("xe-hpc", "Xe-HPC"), ("xe-lpg", "Xe-LPG"),
                 ("xe-lpgplus", "Xe-LPG"), ("xe2", "Xe2"), ("xe3", "Xe3"))
# Families the user can name; their members come from the compiler (`ocloc ids <family>`).
FAMILY_SETS = ("xe-lp", "xe-hpg", "xe-lpg", "xe-lpgplus", "xe2", "xe2-hpg", "xe2-lpg", "xe-hpc", "xe3")


def ip_in_family_range(ip: str, family: str) -> bool:
    if family not in IP_FAMILIES or not is_ip(ip):
        return False
    major, minor, _ = parse_ip(ip)
    low, high = IP_FAMILIES[family]
    return low <= (major, minor) <= high


def family_label(ip: str | None) -> str:
    """`Xe-HPG` for 12.55.8; the IP itself outside every family, `?` when unknown."""
    if not ip:
        return "?"
    return next((label for family, label in FAMILY_LABELS if ip_in_family_range(ip, family)), ip)


# -- per-thread figures the driver and the compiler apply -------------------------------------

# Per-thread scratch caps (NEO GfxCoreHelper::getMaxScratchSize): 2 MiB up to Xe-LP,
# 256 KiB from Xe-HP on.  A zebin that asks for more is rejected at zeKernelCreate.
SCRATCH_LIMIT_XE_LP = 2 * 1024 * 1024
SCRATCH_LIMIT_XE_HP = 256 * 1024


def ip_is_xe_hp_or_later(ip: str) -> bool:
    """Xe-HP (12.50) and later: 256 KiB scratch cap, NEO's 'xehp_and_later' rules."""
    major, minor, _ = parse_ip(ip)
    return (major, minor) >= (12, 50)


def scratch_limit_for_ip(ip: str) -> int:
    return SCRATCH_LIMIT_XE_HP if ip_is_xe_hp_or_later(ip) else SCRATCH_LIMIT_XE_LP


def wide_core(ip: str) -> bool:
    """Xe-HPC (12.60) and Xe2 and later: the cores with 64-byte registers (IGC platform.hpp
    getGRFSize), 8 EUs a core and 128 KiB of shared local memory a work-group.  The one
    place this family rule is written."""
    major, minor, _ = parse_ip(ip)
    return (12, 60) <= (major, minor) < (12, 70) or major >= 20


def grf_bytes_for_ip(ip: str) -> int:
    """Bytes per general register: 64 on the wide cores (`wide_core`), else 32."""
    return 64 if wide_core(ip) else 32


# -- names ------------------------------------------------------------------------------------

# The 19 AOT targets of the decision record this product comes from (seed 003): `-t default`.
DEFAULT_TARGETS = (
    "tgllp", "adl-s", "adl-p", "adl-n", "rpl-s", "rpl-p",
    "dg2-g10", "dg2-g11", "dg2-g12", "acm-g10", "acm-g11", "acm-g12",
    "mtl-u", "mtl-h", "arl-s", "arl-h", "lnl-m", "bmg-g21", "bmg-g31",
)
# What `zeinspect triton` and the prune hook build for unless told: one target per way a
# tl.dot is lowered and a register file is sized (FMA on Xe-LPG, DPAS with 32-byte
# registers on Xe-HPG, DPAS with 64-byte registers on Xe2's LPG and HPG parts).
TRITON_TARGETS = ("arl-s", "dg2-g10", "lnl-m", "bmg-g21")

# IP version -> product name, for naming binaries when no compiler is at hand (docs/how-it-works.md#zebin).
KNOWN_IPS = {
    "12.0.0": "tgllp", "12.1.0": "rkl", "12.2.0": "adl-s", "12.3.0": "adl-p", "12.4.0": "adl-n",
    "12.10.0": "dg1", "12.55.8": "dg2-g10", "12.56.5": "dg2-g11", "12.57.0": "dg2-g12", "12.60.7": "pvc",
    "12.70.4": "mtl-u", "12.71.4": "mtl-h", "12.74.4": "arl-h", "20.1.0": "bmg-g21", "20.2.0": "bmg-g31",
    "20.4.4": "lnl-m", "30.0.4": "ptl-h", "30.1.0": "ptl-u",
}
# Names that share an IP version with a name of KNOWN_IPS (`ocloc ids` says so; docs/how-it-works.md#fat-binaries).
ALIASES = {"rpl-s": "adl-s", "rpl-p": "adl-p", "acm-g10": "dg2-g10", "acm-g11": "dg2-g11", "acm-g12": "dg2-g12",
           "arl-s": "mtl-u"}


def slm_per_work_group(ip: str | None) -> int:
    """The shared local memory one work-group can have (NEO's capability table, slmSize): 64 KiB
    on Xe-LP, Xe-HPG and Xe-LPG, 128 KiB on Xe-HPC, Xe2 and later; 64 KiB when the IP is unknown."""
    if ip is None or not is_ip(ip):
        return 64 * 1024
    return 128 * 1024 if wide_core(ip) else 64 * 1024


def ip_for_name(name: str) -> str | None:
    """The IP version of a product name by the tables above (no compiler asked)."""
    name = ALIASES.get(name, name)
    return next((ip for ip, known in KNOWN_IPS.items() if known == name), None)


# PRODUCT_FAMILY values seen in a zebin's .note.intelgt.compat (checked against ocloc output):
# family -> (label, IP when the family has exactly one, Xe-HP or later?)
PRODUCT_FAMILIES = {
    29: ("tgllp", "12.0.0", False),
    30: ("rkl", "12.1.0", False),
    31: ("adl-s", "12.2.0", False),
    32: ("adl-p", "12.3.0", False),
    33: ("adl-n", "12.4.0", False),
    1210: ("dg1", "12.10.0", False),
    1270: ("dg2", None, True),
    1271: ("pvc", None, True),
    1272: ("mtl", None, True),
    1273: ("arl-h", "12.74.4", True),
    1274: ("bmg", None, True),
    1275: ("lnl-m", "20.4.4", True),
    1300: ("ptl", None, True),
}

# NEO's hardware-free devices (docs/how-it-works.md#level-zero), seen working with
# Debian 12's driver: product -> (ProductFamilyOverride, HardwareInfoOverride, ForceDeviceId, IP).
SIMULATED = {
    "tgllp": ("tgllp", "1x6x16", "9A49", "12.0.0"),
    "dg2": ("dg2", "1x8x16", "56A0", "12.55.8"),
    "mtl": ("mtl", "1x4x8", "7D55", "12.71.4"),
    "pvc": ("pvc", "1x4x8", "0BD5", "12.60.7"),
}

# Targets with a 256-register mode, one per generation, to establish a compiler's
# register-file option spellings on (dg2-g10, mtl-u, bmg-g21).
LARGE_GRF_PROBE_IPS = ("12.55.8", "12.70.4", "20.1.0")


def has_large_register_file(ip: str) -> bool:
    """Whether a target has a 256-register mode: Xe-HP and later (Xe-LP's one register file
    ignores `-ze-opt-large-register-file`: grf_count stays 128, checked on tgllp and adl-s)."""
    return ip_is_xe_hp_or_later(ip)


def sub_group_sizes(ip: str) -> tuple[int, ...]:
    """The sub-group sizes a target compiles a kernel for: 16 and 32 on the wide cores (Xe-HPC,
    Xe2 and later: IGC refuses a required size 8, "which is unsupported on this platform"),
    8, 16 and 32 before."""
    return (16, 32) if wide_core(ip) else (8, 16, 32)


# -- what Triton-XPU's driver says about a device ---------------------------------------------

# The `arch` name Triton-XPU gives a device (get_current_target().arch["arch"], from its arch
# parser over SYCL's architecture enumeration).  triton-xpu 3.3.0b1's backends/intel/
# arch_parser.c names pvc, bmg (G21), lnl (M), dg2 (G10) and mtl (H); later versions add
# arl_h, arl_s and ptl_h (issue 22's reading of third_party/intel/backend at a current commit).
# Any other device is "", as both parsers answer for an architecture they do not know.
TRITON_ARCH = {"pvc": "pvc", "bmg-g21": "bmg", "bmg-g31": "bmg", "lnl-m": "lnl", "dg2-g10": "dg2",
               "acm-g10": "dg2", "dg2-g11": "dg2", "acm-g11": "dg2", "dg2-g12": "dg2", "acm-g12": "dg2",
               "mtl-u": "mtl", "mtl-h": "mtl", "arl-h": "arl_h", "arl-s": "arl_s", "ptl-h": "ptl_h"}


@dataclass(frozen=True)
class Device:
    """The figures of a whole part a driver reports, for targets built offline.

    From Intel's product specifications of the largest part of each name (Xe-cores, or
    sub-slices before Xe-HPG; the highest graphics clock; the memory interface) and NEO's
    device limit of 1024 work-items per work-group.  They only answer what a module asks the driver while it
    loads (the softmax tutorial sizes its launch grid by them); no figure zeinspect reports
    comes from them."""

    xe_cores: int
    core_clock_mhz: int
    mem_clock_mhz: int
    mem_bus_width: int
    max_work_group_size: int = 1024


DEVICES = {
    "tgllp": Device(6, 1350, 2133, 128), "adl-s": Device(2, 1450, 2400, 128), "adl-p": Device(6, 1400, 2600, 128),
    "adl-n": Device(2, 1250, 2400, 64), "rpl-s": Device(2, 1650, 2800, 128), "rpl-p": Device(6, 1500, 2600, 128),
    "dg2-g10": Device(32, 2400, 2187, 256), "acm-g10": Device(32, 2400, 2187, 256),
    "dg2-g11": Device(8, 2450, 1937, 96), "acm-g11": Device(8, 2450, 1937, 96),
    "dg2-g12": Device(16, 2050, 1937, 128), "acm-g12": Device(16, 2050, 1937, 128),
    "mtl-u": Device(4, 1950, 3200, 128), "mtl-h": Device(8, 2350, 3733, 128), "arl-s": Device(4, 2000, 3200, 128),
    "arl-h": Device(8, 2350, 4266, 128), "lnl-m": Device(8, 2050, 4266, 128), "bmg-g21": Device(20, 2670, 2375, 192),
    "bmg-g31": Device(32, 2600, 2375, 256), "pvc": Device(128, 1600, 1600, 8192),
}


@dataclass(frozen=True)
class Product:
    """How a part introduces itself to software: its name as SYCL and Level Zero give it, its PCI
    device ID, its own memory (None for an integrated GPU, which shares the system's) and its
    last-level cache (4 MiB where the specification gives none for the GPU alone).  From Intel's
    product specifications of the part DEVICES describes.  They only answer a library that asks
    torch.xpu about its device during a capture (triton.capture.xpu); no figure zeinspect reports comes
    from them."""

    name: str
    device_id: int
    memory_gib: int | None
    cache_mib: int = 4


PRODUCTS = {
    "tgllp": Product("Intel(R) Iris(R) Xe Graphics", 0x9A49, None),
    "adl-s": Product("Intel(R) UHD Graphics 770", 0x4680, None),
    "adl-p": Product("Intel(R) Iris(R) Xe Graphics", 0x46A6, None),
    "dg2-g10": Product("Intel(R) Arc(TM) A770 Graphics", 0x56A0, 16, 16),
    "dg2-g11": Product("Intel(R) Arc(TM) A380 Graphics", 0x56A5, 6, 6),
    "mtl-u": Product("Intel(R) Graphics", 0x7D45, None),
    "mtl-h": Product("Intel(R) Arc(TM) Graphics", 0x7D55, None),
    "arl-s": Product("Intel(R) Graphics", 0x7D67, None),
    "arl-h": Product("Intel(R) Arc(TM) Graphics", 0x7D51, None),
    "lnl-m": Product("Intel(R) Arc(TM) 140V GPU (16GB)", 0x64A0, None, 8),
    "bmg-g21": Product("Intel(R) Arc(TM) B580 Graphics", 0xE20B, 12, 18),
    "pvc": Product("Intel(R) Data Center GPU Max 1550", 0x0BD5, 128, 408),
}


def product(name: str) -> Product:
    """The part a target name stands for; a name without one answers as the driver names an
    unnamed device (`Intel(R) Graphics [0x....]`), with the target's name in place of the ID."""
    name = {"acm-g10": "dg2-g10", "acm-g11": "dg2-g11", "rpl-s": "adl-s", "rpl-p": "adl-p"}.get(name, name)
    return PRODUCTS.get(name) or Product(f"Intel(R) Graphics [{name}]", 0, None)
