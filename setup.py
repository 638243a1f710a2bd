"""The wheel's build step for the compiled stages; everything else about the package is in pyproject.toml.

`pip install .` (from a checkout or from the sdist) and `pip wheel .` compile the stages of
`cleaner.NATIVE_MODULES` into the wheel's `cleaner/_native/`, with the same script a checkout uses
(`scripts/build_native.py`, which the sdist carries), mypy and Cython coming from pyproject.toml's
[build-system] requires: a C compiler and the Python headers are all the machine needs. The build runs in the
wheel's build folder, so the checkout is left as it was; a checkout whose own build is current for this
interpreter hands it over as package data, and nothing is compiled again.

A build that fails stops the install with a message, rather than installing a package that runs 30-40 %
slower without anyone noticing on a cluster: `WEBCLEANER_PURE_PYTHON=1 pip install .` installs the pure-Python
package knowingly (`cleaner --version` then says so, as does the job's per-worker record). An editable install
(`pip install -e .`, what scripts/setup_env.sh does) builds nothing here: setup_env.sh builds in the checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
PURE_PYTHON_ENV = "WEBCLEANER_PURE_PYTHON"  # (cleaner.PURE_PYTHON_ENV; the package is not imported here)


def pure_python() -> bool:
    return os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0")


class DistributionWithCompiledStages(Distribution):
    """The wheel holds extension modules that setuptools does not know of (the build script makes them): said
    here, so that the wheel is tagged for this interpreter and platform (cp311-cp311-linux_x86_64), not as one
    that any Python on any machine could install."""

    def has_ext_modules(self) -> bool:
        return not pure_python()


class BuildPyWithCompiledStages(build_py):
    """build_py, then the compiled stages into the build folder's copy of the package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # the checkout itself is what runs: scripts/setup_env.sh builds there
        if pure_python():
            print(f"[native] {PURE_PYTHON_ENV} is set: the package is installed as pure Python", file=sys.stderr)
            return
        package = Path(self.build_lib) / "cleaner"
        # Without a profile (README, "Profile-guided build"): its training imports the package, whose dependencies
        # this isolated build environment does not have.
        env = {k: v for k, v in os.environ.items() if k != "WEBCLEANER_PROFILE_PAGES"}
        proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_native.py"), "--if-stale",
                               "--package", str(package)], env=env)
        if proc.returncode != 0:
            raise SystemExit(
                "webcleaner: the compiled stages could not be built (they need a C compiler and the Python headers: "
                "Debian's gcc and python3-dev); the messages above say why. Without them the cleaner runs as pure "
                f"Python, 30-40 % slower: to install it so knowingly, set {PURE_PYTHON_ENV}=1.")


setup(distclass=DistributionWithCompiledStages, cmdclass={"build_py": BuildPyWithCompiledStages})
