"""Web page cleaning for corpus building.

The package is laid out by role, one layer per sub-package; a module imports only from its own layer
and the layers below it (scripts/check_imports.py enforces the order, docs/architecture.md draws it):

    tools/    the command line, inspect/annotate, reading and writing `cleaner clean`'s files, datatrove
    learn/    training, evaluation and the seed systems' page path: users of the whole pipeline
    api.py    `cleaner.api.clean_html`: one page through the whole chain (public, never raises)
    output/   labelled blocks -> CleanEval text, the corpus columns and the Parquet schema
    label/    blocks -> labels: the CRF, its model files and decisions, the marker typer; systems/
    gold/     gold text -> block labels (alignment), the data sets, the scorer
    page/     bytes -> decoded -> parsed -> blocks -> features (the per-page path, compiled stages)
    warc/     reading and writing WARC files
    config.py, settings.py, packaged.py, labels.py, this file: what every layer shares

Pipeline (one module per stage, plain dataclasses between them):

    page.decode -> page.segment -> page.features -> label.model (CRF tag) -> output.assemble
    bytes          blocks          feature dicts      labels + marginals        CleanEval text + statistics

`cleaner.gold.gold`/`cleaner.gold.align` turn hand-cleaned gold text into block labels for training,
`cleaner.gold.score` is the project's scorer.

Compiled modules. The per-block stages (`NATIVE_MODULES`, named within this package) are plain,
type-annotated Python that `scripts/build_native.py` can compile with mypyc into `cleaner/_native/`
(the README's setup does; `_native/page/` holds the build of `cleaner.page`): the same source, the
same results, 20-30 % less CPU in segmentation and features (docs/speed.md). Seven modules are Cython
(`CYTHON_MODULES`), built by the same script, each with a readable reference that gives the same results: the
pre-parse guard's tag scan, of a text or of its UTF-8 (`page.compiled_guard`; references
`cleaner.page.markup_guard.scan_edits` and `_tags_of_long_runs`; the UTF-8 check `is_utf8`, reference
`cleaner.page.decode._strict_utf8`), the segmenter's walk over Lexbor's tree (`page.compiled_walk`; reference
`cleaner.page.segment._walk`), the counts and attributes the features read of a block's text (`page.compiled_text`;
references `cleaner.page.text.measure_text` and `cleaner.page.features.FeatureExtractor._text_features`), a
model's attribute rows as C integers (`page.compiled_rows`; reference
`cleaner.page.features.FeatureExtractor.parts_reference`), the CRF's
inference (`label.compiled_chain`; reference `cleaner/label/chain.py`, the same floats to the last bit), the
attribute codes a model names its attributes by (`label.compiled_codes`; reference
`cleaner.label.crf.encode_attribute`, hashlib's BLAKE2b) and the corpus columns' loops (`output.compiled_corpus`;
references in `cleaner.output.signals` and `cleaner.output.dedup`). They are used
only while they match the sources they were built from, so an edited module is never shadowed by a stale build;
`WEBCLEANER_PURE_PYTHON=1` turns them off.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import json
import os
import sys
from pathlib import Path
from types import ModuleType

__version__ = "0.1.0"

# Compiled by scripts/build_native.py, in this order (a module's imports before it); named within this package.
# The mypyc ones are plain Python compiled as they are; the Cython ones (CYTHON_MODULES) are .pyx sources with
# a readable Python reference beside them (label.compiled_chain: cleaner/label/chain.py), used where there is no build.
NATIVE_MODULES = (
    "page.text", "page.page_marks", "page.segment", "page.compiled_walk", "page.compiled_guard", "page.compiled_text",
    "page.cues", "page.feature_names", "page.compiled_rows", "page.features", "label.compiled_chain",
    "label.compiled_codes", "output.markdown", "output.compiled_corpus", "page.structure",
    "label.markers", "label.decide", "output.assemble", "label.crf", "page.markup_guard", "page.page_type",
)
CYTHON_MODULES = ("page.compiled_walk", "page.compiled_guard", "page.compiled_text", "page.compiled_rows",
                  "label.compiled_chain", "label.compiled_codes", "output.compiled_corpus")
NATIVE_DIR = "_native"
PURE_PYTHON_ENV = "WEBCLEANER_PURE_PYTHON"
PROFILE_TRAINING_ENV = "WEBCLEANER_PROFILE_TRAINING"  # set by scripts/build_native.py for its training run only


def source_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def module_path(root: Path, module: str, suffix: str = ".py") -> Path:
    """The file of `module` (named within this package, e.g. "page.text") under `root`: the package
    directory for a source, its `_native` directory for a build."""
    return root.joinpath(*module.split(".")).with_name(module.rpartition(".")[2] + suffix)


def source_path(package_dir: Path, module: str) -> Path:
    """The source a compiled module is built from: its .py (mypyc) or its .pyx (Cython)."""
    return module_path(package_dir, module, ".pyx" if module in CYTHON_MODULES else ".py")


def native_build_status(package_dir: Path) -> tuple[Path | None, str]:
    """(the directory of compiled modules to use, or None; why). A build is used only when it was made
    for this interpreter and every compiled module's source is byte for byte the one it was built from."""
    native = package_dir / NATIVE_DIR
    manifest_path = native / "manifest.json"
    if not manifest_path.is_file():
        if (package_dir.parent / "scripts" / "build_native.py").is_file():  # a checkout
            return None, "not built (scripts/build_native.py)"
        # an installed package: `pip install` builds the stages into every wheel (setup.py) unless told not to
        return None, ("not built: runs as pure Python, slower; it was installed with WEBCLEANER_PURE_PYTHON=1 or "
                      "from a wheel made so: `pip install` it again without, where a C compiler is (README, "
                      "Compiled stages)")
    try:
        manifest = json.loads(manifest_path.read_text())
        sources = manifest["sources"]
        suffix = manifest["extension_suffix"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, f"unreadable manifest ({type(exc).__name__})"
    if suffix not in importlib.machinery.EXTENSION_SUFFIXES:
        return None, f"built for another interpreter ({suffix})"
    if sorted(sources) != sorted(NATIVE_MODULES):
        return None, "stale: built for other modules (rerun scripts/build_native.py)"
    for module, digest in sorted(sources.items()):
        source = source_path(package_dir, module)
        if not source.is_file() or source_digest(source) != digest:
            return None, (f"stale: {source.relative_to(package_dir)} changed since the build "
                          "(rerun scripts/build_native.py)")
        if not module_path(native, module, suffix).is_file():
            return None, f"incomplete: {module_path(Path(), module, suffix)} is missing"
    profile = manifest.get("profile")
    if isinstance(profile, dict) and profile.get("pages") is None and not os.environ.get(PROFILE_TRAINING_ENV):
        # (scripts/build_native.py's instrumented build, used only by its own training run)
        return None, ("an instrumented build, left by an interrupted profile-guided build "
                      "(rerun scripts/build_native.py)")
    how = f"compiled, profile-guided ({profile.get('summary')})" if isinstance(profile, dict) else "compiled"
    return native, how + ": " + ", ".join(sorted(sources))


def _use_native() -> tuple[Path | None, str]:
    if os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0"):
        return None, f"pure Python ({PURE_PYTHON_ENV} is set)"
    package_dir = Path(__file__).resolve().parent
    native, why = native_build_status(package_dir)
    if native is None and (package_dir / NATIVE_DIR).exists():  # a build is there and cannot be used: say so once
        print(f"[webcleaner] compiled modules not used, {why}", file=sys.stderr)
    return native, why


NATIVE_BUILD, NATIVE_STATUS = _use_native()


def use_native_build(package: str, path: list[str]) -> None:
    """Put the build of `package`'s compiled modules in front of its sources: called by each sub-package
    holding some (cleaner/page/__init__.py) with its `__name__` and `__path__`, so that `cleaner.page.features`
    is the compiled one while the build is current (NATIVE_BUILD is None otherwise)."""
    if NATIVE_BUILD is not None:
        path.insert(0, str(NATIVE_BUILD.joinpath(*package.split(".")[1:])))


def compiled_twin(module: str) -> ModuleType | None:
    """The Cython module `module` of CYTHON_MODULES (named within this package, "page.compiled_text"), or None when
    it is not built or does not load: the readable reference beside it then runs, and NATIVE_STATUS says so
    (`cleaner --version`, the job's per-worker record)."""
    try:
        return importlib.import_module(f"{__name__}.{module}")
    except ImportError:
        return None


def native_modules() -> list[str]:
    """The modules of this package running compiled (imported ones only)."""
    return sorted(
        name for name in NATIVE_MODULES
        if (m := sys.modules.get(f"{__name__}.{name}")) is not None
        and any(str(getattr(m, "__file__", "")).endswith(s) for s in importlib.machinery.EXTENSION_SUFFIXES)
    )
