from setuptools import setup

from kiln.setuptools import KernelModule, build_ext

setup(
    ext_modules=[
        KernelModule("demo.kernels", "demo/kernels.py", archs="75;80"),
        KernelModule("demo.elementwise", "demo/elementwise.py", archs=["8.0", "9.0+PTX"]),
    ],
    cmdclass={"build_ext": build_ext},
)
