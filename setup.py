"""Only for cffi: the Level Zero binding (native/ze_build.py) is generated at install time."""
from setuptools import setup

setup(cffi_modules=["native/ze_build.py:ffibuilder"])
