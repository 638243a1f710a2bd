#!/usr/bin/env python
"""Compile the per-block stages (cleaner.NATIVE_MODULES) with mypyc, and the CRF's inference
(cleaner.CYTHON_MODULES) with Cython, into cleaner/_native/ (a module PKG.NAME of the package is built as
_native/PKG/NAME<suffix>, a mypyc one beside its shared library NAME__mypyc).

    .venv/bin/python scripts/build_native.py [--if-stale] [--check]

The modules stay plain Python: mypyc compiles the same source to C, using its type annotations
to skip the interpreter's dispatch (segmentation and features 20-30 % less CPU, identical output:
docs/speed.md). `cleaner/__init__.py` puts the build in front of the sources only while every
compiled module's source is the one it was built from (a manifest of their SHA-256), so editing
a module falls back to the Python source until the next build, never to stale code.

--if-stale     build only when the current build is missing or stale (what scripts/setup_env.sh runs)
--check        build nothing; print the status and exit 0 when the build is current, 1 when not
--package DIR  the copy of the package to build (its sources compiled, its `_native/` written): what a wheel is
               made of (setup.py's build step passes its build folder); default: this checkout's cleaner/

Needs mypy and Cython (the `native` extra, in `dev` and `pack`) and a C compiler. Exit codes: 0 built or
current, 1 not current (--check), 2 the build failed (the package then runs as pure Python).
"""

from __future__ import annotations

import argparse
import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cleaner"

# Run in a child interpreter (mypyc builds through setuptools, which wants its own argv).
_BUILD = r"""
import sys
from setuptools import setup
from mypyc.build import mypycify
paths, lib, tmp, c_dir = sys.argv[1].split(","), sys.argv[2], sys.argv[3], sys.argv[4]
# separate=True: one shared library per module, named inside its package (cleaner.page.<module>__mypyc),
# so the build is found through the package's __path__ alone, never through sys.path.
# Only the compiled modules must type-check; the modules they import are read for their types.
modules = mypycify(["--follow-imports=silent"] + paths, opt_level="3", separate=True, target_dir=c_dir)
setup(name="webcleaner-native", ext_modules=modules,
      script_args=["build_ext", "--build-lib", lib, "--build-temp", tmp])
"""

# The Cython modules (cleaner.CYTHON_MODULES), in a child interpreter too: argv = the modules' dotted names
# within the package, their .pyx sources, the build and temporary directories.
# -ffp-contract=off: no fused multiply-add, so every float is rounded as the Python reference rounds it.
_BUILD_CYTHON = r"""
import sys
from setuptools import Extension, setup
from Cython.Build import cythonize
names, paths, lib, tmp = sys.argv[1].split(","), sys.argv[2].split(","), sys.argv[3], sys.argv[4]
extensions = [Extension("cleaner." + name, [path], extra_compile_args=["-O3", "-ffp-contract=off"])
              for name, path in zip(names, paths)]
setup(name="webcleaner-native-cython", ext_modules=cythonize(extensions, build_dir=tmp, quiet=True),
      script_args=["build_ext", "--build-lib", lib, "--build-temp", tmp])
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--if-stale", action="store_true", help="build only when missing or stale")
    ap.add_argument("--check", action="store_true", help="report the build's status, build nothing")
    ap.add_argument("--package", type=Path, default=PACKAGE, metavar="DIR",
                    help="the copy of the package to build (default: this checkout's cleaner/)")
    args = ap.parse_args(argv)
    package = args.package.resolve()

    sys.path.insert(0, str(ROOT))
    os.environ["WEBCLEANER_PURE_PYTHON"] = "1"  # (importing cleaner must not load the build being replaced)
    import cleaner

    native, why = cleaner.native_build_status(package)
    if args.check:
        print(f"[native] {why}")
        return 0 if native is not None else 1
    if args.if_stale and native is not None:
        print(f"[native] current ({why})", file=sys.stderr)
        return 0

    modules = cleaner.NATIVE_MODULES
    by_mypyc = [m for m in modules if m not in cleaner.CYTHON_MODULES]
    by_cython = [m for m in modules if m in cleaner.CYTHON_MODULES]
    out = package / cleaner.NATIVE_DIR
    with tempfile.TemporaryDirectory(prefix="webcleaner-native-") as tmp:
        tmp_path = Path(tmp)
        # Digests first: a module edited while the build runs is then stale, not silently compiled in.
        sources = {m: cleaner.source_digest(cleaner.source_path(package, m)) for m in modules}
        paths = ",".join(str(cleaner.module_path(package, m)) for m in by_mypyc)
        print(f"[native] compiling {', '.join(by_mypyc)} with mypyc (about half a minute)", file=sys.stderr)
        builds = [
            [sys.executable, "-c", _BUILD, paths, str(tmp_path / "lib"), str(tmp_path / "tmp"), str(tmp_path / "c")],
            [sys.executable, "-c", _BUILD_CYTHON, ",".join(by_cython),
             ",".join(str(cleaner.source_path(package, m)) for m in by_cython), str(tmp_path / "lib"),
             str(tmp_path / "tmp-cython")],
        ]
        for command in builds:
            # (not in the checkout: setuptools would read the project's pyproject.toml as this build's)
            proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
            if proc.returncode != 0:
                sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
                print("[native] build failed: the package runs as pure Python", file=sys.stderr)
                return 2
        lib = tmp_path / "lib" / "cleaner"
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        built = sorted(lib.rglob(f"*{suffix}"))  # each module and its shared library (<module>__mypyc)
        missing = [m for m in modules if not cleaner.module_path(lib, m, suffix).is_file()]
        if missing:
            print(f"[native] build failed: no {', '.join(missing)}{suffix} was made", file=sys.stderr)
            return 2
        staging = tmp_path / "native"
        staging.mkdir()
        for f in built:  # kept in their packages' folders: _native/page/features<suffix>
            (staging / f.relative_to(lib)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, staging / f.relative_to(lib))
        manifest = {
            "sources": sources,
            "extension_suffix": suffix,
            "python": sys.version.split()[0],
            "mypy": _mypy_version(),
            "cython": _cython_version(),
            "note": "built by scripts/build_native.py; used by cleaner/__init__.py while the sources match",
        }
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        if out.exists():
            shutil.rmtree(out)
        shutil.copytree(staging, out)
    print(f"[native] built {out}: {', '.join(modules)}", file=sys.stderr)
    return 0


def _cython_version() -> str:
    try:
        from Cython import __version__

        return __version__
    except ImportError:
        return "?"


def _mypy_version() -> str:
    try:
        from mypy.version import __version__

        return __version__
    except ImportError:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
