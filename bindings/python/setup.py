"""The wheel carries libcubehip.so, a native library: tag it for the platform (py3-none-linux_x86_64)
rather than as pure Python, so pip never installs it on a machine the library cannot run on.
Everything else is in pyproject.toml."""

from setuptools import setup

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # pragma: no cover - an sdist build needs no wheel tag
    setup()
else:

    class PlatformWheel(bdist_wheel):
        def finalize_options(self) -> None:
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self) -> tuple[str, str, str]:
            # Any Python 3 (ctypes, no extension module), this platform's library.
            return "py3", "none", super().get_tag()[2]

    setup(cmdclass={"bdist_wheel": PlatformWheel})
