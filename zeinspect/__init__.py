"""zeinspect: find, gate and remove scratch memory use in Intel GPU kernels."""

__version__ = "0.1.0"
