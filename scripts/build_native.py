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
--profile-pages PATH
               profile-guided: compile instrumented, clean these pages (the shared data, a folder of HTML files
               or WARC files: best, a sample of the crawl to be cleaned) as the job does, and compile again
               from the counts gcc made (about 4 % less CPU a page, the same output: docs/speed.md, stop 78);
               any step failing gives the plain build, and says why. Default: $WEBCLEANER_PROFILE_PAGES
               (how `pip install` asks for it), else none
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
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cleaner"

# Run in a child interpreter (mypyc builds through setuptools, which wants its own argv).
_BUILD = r"""
import os, sys
from setuptools import setup
from mypyc.build import mypycify
FORCE = ["--force"] if os.environ.get("WEBCLEANER_BUILD_FORCE") else []
paths, lib, tmp, c_dir = sys.argv[1].split(","), sys.argv[2], sys.argv[3], sys.argv[4]
# separate=True: one shared library per module, named inside its package (cleaner.page.<module>__mypyc),
# so the build is found through the package's __path__ alone, never through sys.path.
# Only the compiled modules must type-check; the modules they import are read for their types.
modules = mypycify(["--follow-imports=silent"] + paths, opt_level="3", separate=True, target_dir=c_dir)
setup(name="webcleaner-native", ext_modules=modules,
      script_args=["build_ext", "--build-lib", lib, "--build-temp", tmp] + FORCE)
"""

# The Cython modules (cleaner.CYTHON_MODULES), in a child interpreter too: argv = the modules' dotted names
# within the package, their .pyx sources, the build and temporary directories.
# -ffp-contract=off: no fused multiply-add, so every float is rounded as the Python reference rounds it.
_BUILD_CYTHON = r"""
import os, sys
from setuptools import Extension, setup
from Cython.Build import cythonize
FORCE = ["--force"] if os.environ.get("WEBCLEANER_BUILD_FORCE") else []
names, paths, lib, tmp = sys.argv[1].split(","), sys.argv[2].split(","), sys.argv[3], sys.argv[4]
extensions = [Extension("cleaner." + name, [path], extra_compile_args=["-O3", "-ffp-contract=off"])
              for name, path in zip(names, paths)]
setup(name="webcleaner-native-cython", ext_modules=cythonize(extensions, build_dir=tmp, quiet=True),
      script_args=["build_ext", "--build-lib", lib, "--build-temp", tmp] + FORCE)
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--if-stale", action="store_true", help="build only when missing or stale")
    ap.add_argument("--check", action="store_true", help="report the build's status, build nothing")
    ap.add_argument("--profile-pages", action="append", metavar="PATH",
                    help="build with gcc's profile-guided optimisation, trained on these pages (repeatable): a folder "
                         "of the shared data's layout, any folder of .html files, or WARC files; default: "
                         f"${PROFILE_ENV} (paths separated by {os.pathsep!r}), else no profile")
    ap.add_argument("--profile-limit", type=int, default=1500, metavar="N",
                    help="at most N pages of them, spread evenly (default 1500: a training of about half a minute)")
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
    out = package / cleaner.NATIVE_DIR
    profile_pages = args.profile_pages or list(filter(None, os.environ.get(PROFILE_ENV, "").split(os.pathsep)))
    with tempfile.TemporaryDirectory(prefix="webcleaner-native-") as tmp:
        tmp_path = Path(tmp)
        # Digests first: a module edited while the build runs is then stale, not silently compiled in.
        sources = {m: cleaner.source_digest(cleaner.source_path(package, m)) for m in modules}
        try:
            profile = None
            if profile_pages:
                try:
                    profile = _profile_guided(cleaner, package, out, sources, tmp_path, profile_pages,
                                              args.profile_limit)
                except ProfileFailed as why:
                    print(f"[native] no profile-guided build ({why}): building without a profile", file=sys.stderr)
            if profile is None:
                _stage(cleaner, _compile(cleaner, package, tmp_path, ""), out, sources, None)
        except BuildFailed as why:
            print(f"[native] build failed ({why}): the package runs as pure Python", file=sys.stderr)
            return 2
    kind = "profile-guided, " + profile["summary"] if profile else "no profile"
    print(f"[native] built {out} ({kind}): {', '.join(modules)}", file=sys.stderr)
    return 0


class BuildFailed(Exception):
    """The compiler or a module's build failed (its messages are on stderr)."""


class ProfileFailed(Exception):
    """A profile-guided build could not be made: the plain build is made instead."""


# Flags of the two compilations of a profile-guided build, added to the compiler's (setuptools reads CFLAGS and
# LDFLAGS). The instrumented build counts every branch into a .gcda file beside each object file of the build's
# temporary folder; the final one compiles the same sources at the same paths, so it finds them.
# -fprofile-partial-training: code the training never ran (a stage the pages did not reach, an error path) is
# compiled as without a profile, not shrunk as cold. No flag here changes what the code computes (no fast-math:
# every float is rounded as before, and the outputs are the plain build's, byte for byte: docs/speed.md, stop 78).
PROFILE_GENERATE = "-fprofile-generate -fprofile-update=single"
PROFILE_USE = "-fprofile-use -fprofile-partial-training -fprofile-correction -Wno-missing-profile"
# The --profile-pages of a build that is not given any (scripts/setup_env.sh's; setup.py's wheel builds remove it,
# their isolated environment cannot run the training: README, "Profile-guided build").
PROFILE_ENV = "WEBCLEANER_PROFILE_PAGES"

# Every compilation's, beside -O3 and the modules' own: -fno-plt calls Python's C API through the GOT in one indirect
# call, not a jump to a PLT stub that jumps again (libpython is a shared library on most builds): 0.5 % fewer
# instructions a page, 0-4 % less CPU (docs/speed.md, stop 78). It changes no computation.
COMPILE_FLAGS = "-fno-plt"


def _compile(cleaner, package: Path, tmp_path: Path, cflags: str, ldflags: str = "", force: bool = False) -> Path:
    """Compile every module of `package` into tmp_path/lib (the objects in tmp_path's own folders, the same
    for every compilation of one build); returns the built package's folder."""
    modules = cleaner.NATIVE_MODULES
    by_mypyc = [m for m in modules if m not in cleaner.CYTHON_MODULES]
    by_cython = [m for m in modules if m in cleaner.CYTHON_MODULES]
    shutil.rmtree(tmp_path / "lib", ignore_errors=True)
    paths = ",".join(str(cleaner.module_path(package, m)) for m in by_mypyc)
    print(f"[native] compiling {', '.join(by_mypyc)} with mypyc (about half a minute)"
          + (f" [{cflags}]" if cflags else ""), file=sys.stderr)
    builds = [
        [sys.executable, "-c", _BUILD, paths, str(tmp_path / "lib"), str(tmp_path / "tmp"), str(tmp_path / "c")],
        [sys.executable, "-c", _BUILD_CYTHON, ",".join(by_cython),
         ",".join(str(cleaner.source_path(package, m)) for m in by_cython), str(tmp_path / "lib"),
         str(tmp_path / "tmp-cython")],
    ]
    env = dict(os.environ)
    cflags = f"{COMPILE_FLAGS} {cflags}".strip()
    env["CFLAGS"] = f"{env.get('CFLAGS', '')} {cflags}".strip()
    if ldflags:
        env["LDFLAGS"] = f"{env.get('LDFLAGS', '')} {ldflags}".strip()
    if force:
        env["WEBCLEANER_BUILD_FORCE"] = "1"  # (the objects are there from the first compilation: made again)
    for command in builds:
        # (not in the checkout: setuptools would read the project's pyproject.toml as this build's)
        proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
            raise BuildFailed("the compiler's messages are above")
    lib = tmp_path / "lib" / "cleaner"
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    missing = [m for m in modules if not cleaner.module_path(lib, m, suffix).is_file()]
    if missing:
        raise BuildFailed(f"no {', '.join(missing)}{suffix} was made")
    return lib


def _stage(cleaner, lib: Path, out: Path, sources: dict[str, str], profile: dict | None) -> None:
    """Put the build of `lib` in `out` (the package's _native/), with its manifest: the sources' digests, and
    `profile`, what a profile-guided build was trained on (None: no profile; without "pages": the instrumented build
    a profile-guided build runs its pages through, replaced at once, which cleaner.native_build_status refuses)."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    built = sorted(lib.rglob(f"*{suffix}"))  # each module and its shared library (<module>__mypyc)
    staging = lib.parent.parent / "native"
    shutil.rmtree(staging, ignore_errors=True)
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
        "profile": profile,
        "note": "built by scripts/build_native.py; used by cleaner/__init__.py while the sources match",
    }
    (staging / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(staging, out)


def _profile_guided(cleaner, package: Path, out: Path, sources: dict[str, str], tmp_path: Path,
                    pages: list[str], limit: int) -> dict:
    """Build with gcc's profile-guided optimisation: an instrumented build cleans `pages` (_TRAIN: what a job does
    to a record), and the build made again from its counts is staged. Raises ProfileFailed when any step cannot be
    made (another compiler, no pages, the training failed), with the instrumented build never left in place."""
    missing = [p for p in pages if not Path(p).exists()]
    if missing:
        raise ProfileFailed(f"no such file or folder: {', '.join(missing)}")
    pages = [str(Path(p).resolve()) for p in pages]  # (the training runs in the build's folder)
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "").split()
    version = subprocess.run(cc[:1] + ["--version"], capture_output=True, text=True) if cc else None
    if version is None or version.returncode != 0 or "Free Software Foundation" not in version.stdout:
        raise ProfileFailed(f"the compiler {cc[:1]} is not gcc")
    try:
        instrumented = _compile(cleaner, package, tmp_path, PROFILE_GENERATE, "-fprofile-generate")
    except BuildFailed as why:
        raise ProfileFailed(f"the instrumented build failed: {why}") from None
    _stage(cleaner, instrumented, out, sources, {"summary": "instrumented, training"})
    try:
        env = {k: v for k, v in os.environ.items() if k != cleaner.PURE_PYTHON_ENV}
        env[cleaner.PROFILE_TRAINING_ENV] = "1"
        proc = subprocess.run([sys.executable, "-c", _TRAIN, str(package.parent), str(limit), *pages],
                              capture_output=True, text=True, env=env, cwd=tmp_path)
        trained = proc.stdout.strip().splitlines()[-1:] if proc.returncode == 0 else []
        if not trained or not trained[0].startswith("TRAINED "):
            raise ProfileFailed(f"the training failed: {(proc.stderr or proc.stdout).strip()[-600:]}")
        count, summary = trained[0][len("TRAINED "):].split(" ", 1)
        if int(count) == 0:
            raise ProfileFailed(f"no page to train on in {', '.join(pages)}")
        try:
            final = _compile(cleaner, package, tmp_path, PROFILE_USE, force=True)
        except BuildFailed as why:
            raise ProfileFailed(f"the build from the profile failed: {why}") from None
    except ProfileFailed:
        shutil.rmtree(out, ignore_errors=True)  # (never the instrumented build left in place: it is slower)
        raise
    profile = {"pages": int(count), "summary": summary, "flags": PROFILE_USE}
    _stage(cleaner, final, out, sources, profile)
    return profile


# The training run of a profile-guided build, in a child interpreter that loads the instrumented build: what the job
# does to each HTML record (cleaner.api.clean_html with the Markdown, then the corpus columns of its text), over at
# most `limit` pages spread evenly over the sources. argv = the package's parent folder, the limit, the sources: a
# folder of the shared data's layout (cleaner.gold.data.find_pages), any other folder (its .html/.htm files, gzipped
# or not), or WARC/ARC files.
_TRAIN = r"""
import gzip, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import cleaner
if cleaner.NATIVE_BUILD is None:
    sys.exit("the instrumented build does not load: " + cleaner.NATIVE_STATUS)
from cleaner.api import clean_html
from cleaner.config import load_config
from cleaner.gold.data import find_pages
from cleaner.label.model import load_model
from cleaner.output.corpus import default_corpus_columns
from cleaner.tools.runtime import tune_gc
from cleaner.warc.read import WarcFileStats, iter_html_records

limit = int(sys.argv[2])

def readers(source):
    path = Path(source)
    if path.is_dir():
        try:
            pages = find_pages(path)
        except (FileNotFoundError, ValueError):
            pages = []
        if pages:
            return [p.read_html for p in pages]
        files = sorted(f for f in path.rglob("*") if f.name.endswith((".html", ".htm", ".html.gz", ".htm.gz")))
        return [lambda f=f: gzip.decompress(f.read_bytes()) if f.name.endswith(".gz") else f.read_bytes()
                for f in files]
    out = []  # (a WARC's first `limit` pages: its payloads are held until the training, a crawl's file is not)
    with open(path, "rb") as fh:
        for rec in iter_html_records(fh, str(path), WarcFileStats()):
            if rec.payload and not rec.payload_truncated:
                out.append(lambda data=rec.payload: data)
                if len(out) >= limit:
                    break
    return out

todo = [r for source in sys.argv[3:] for r in readers(source)]
step = max(1, -(-len(todo) // limit))
todo = todo[::step]
config = load_config()
tune_gc(config)
model = load_model(None)
corpus = default_corpus_columns()
cleaned = 0
for read in todo:
    result = clean_html(read(), model=model, config=config, markdown=True)
    corpus.columns(result.plain or "")
    cleaned += result.status == "cleaned"
print(f"TRAINED {len(todo)} {len(todo)} pages ({cleaned} cleaned) of {', '.join(Path(s).name for s in sys.argv[3:])}")
"""


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
