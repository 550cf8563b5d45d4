from setuptools import setup

from kiln.setuptools import KernelModule, build_ext

setup(
    ext_modules=[KernelModule("bad.kernels", "bad/kernels.py", archs="80")],
    cmdclass={"build_ext": build_ext},
)
