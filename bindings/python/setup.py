"""The wheel carries libcubehip.so and the extension module cubehip._native (C, on CPython's
stable ABI from 3.10: one cp310-abi3 wheel serves 3.10 and later). The extension is not linked
against libcubehip: the package loads the library with ctypes and binds the extension to it at
import (_native.c says why). Everything else is in pyproject.toml.

    python3 setup.py build_ext --inplace    # the extension beside the sources, for the tests
"""

from setuptools import Extension, setup

native = Extension(
    "cubehip._native",
    # One module from several files, by job: _native.c (binding, method table), _launch.c,
    # _buffers.c, _dlpack.c, with _native.h declaring what they share; _hostpool.c.
    sources=[
        "src/cubehip/_native.c",
        "src/cubehip/_launch.c",
        "src/cubehip/_buffers.c",
        "src/cubehip/_dlpack.c",
        "src/cubehip/_hostpool.c",
    ],
    depends=["src/cubehip/_native.h"],
    py_limited_api=True,
    extra_compile_args=["-std=c11", "-O2", "-Wall", "-Wextra", "-Wno-missing-field-initializers", "-Wno-cast-function-type"],
    libraries=["dl"],  # dlopen and dlsym: in libc from glibc 2.34, in libdl before
)

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # pragma: no cover - an sdist build needs no wheel tag
    setup(ext_modules=[native])
else:

    class Abi3Wheel(bdist_wheel):
        def finalize_options(self) -> None:
            super().finalize_options()
            self.py_limited_api = "cp310"  # the tag cp310-abi3-<platform>

    setup(ext_modules=[native], cmdclass={"bdist_wheel": Abi3Wheel})
