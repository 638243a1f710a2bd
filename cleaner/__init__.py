"""Web page cleaning for corpus building.

Pipeline (one module per stage, plain dataclasses between them):

    decode  -> segment -> features -> model (CRF tag) -> assemble
    bytes      blocks     feature      labels + marginals  CleanEval text + statistics
               dicts

`cleaner.api.clean_html` runs the whole chain on one page and never raises.
`cleaner.gold`/`cleaner.align` turn hand-cleaned gold text into block labels for training,
`cleaner.score` is the project's scorer.

Compiled modules. The per-block stages (`NATIVE_MODULES`) are plain, type-annotated Python that
`scripts/build_native.py` can compile with mypyc into `cleaner/_native/` (the README's setup does):
the same source, the same results, 20-30 % less CPU in segmentation and features
(docs/speed.md). They are used only while they match the sources they were built from, so an
edited module is never shadowed by a stale build; `WEBCLEANER_PURE_PYTHON=1` turns them off.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import os
import sys
from pathlib import Path

__version__ = "0.1.0"

# Compiled by scripts/build_native.py, in this order (a module's imports before it).
NATIVE_MODULES = ("text", "segment", "cues", "features")
NATIVE_DIR = "_native"
PURE_PYTHON_ENV = "WEBCLEANER_PURE_PYTHON"


def source_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def native_build_status(package_dir: Path) -> tuple[Path | None, str]:
    """(the directory of compiled modules to use, or None; why). A build is used only when it was made
    for this interpreter and every compiled module's source is byte for byte the one it was built from."""
    native = package_dir / NATIVE_DIR
    manifest_path = native / "manifest.json"
    if not manifest_path.is_file():
        return None, "not built (scripts/build_native.py)"
    try:
        manifest = json.loads(manifest_path.read_text())
        sources = manifest["sources"]
        suffix = manifest["extension_suffix"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, f"unreadable manifest ({type(exc).__name__})"
    if suffix not in importlib.machinery.EXTENSION_SUFFIXES:
        return None, f"built for another interpreter ({suffix})"
    for module, digest in sorted(sources.items()):
        source = package_dir / f"{module}.py"
        if not source.is_file() or source_digest(source) != digest:
            return None, f"stale: {module}.py changed since the build (rerun scripts/build_native.py)"
        if not (native / f"{module}{suffix}").is_file():
            return None, f"incomplete: {module}{suffix} is missing"
    return native, "compiled: " + ", ".join(sorted(sources))


def _use_native() -> str:
    if os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0"):
        return f"pure Python ({PURE_PYTHON_ENV} is set)"
    package_dir = Path(__file__).resolve().parent
    native, why = native_build_status(package_dir)
    if native is not None:
        # Searched before the package's own directory, so `cleaner.features` is the compiled one.
        __path__.insert(0, str(native))  # noqa: F821 (the package's __path__)
    elif (package_dir / NATIVE_DIR).exists():  # a build is there and cannot be used: say so once
        print(f"[webcleaner] compiled modules not used, {why}", file=sys.stderr)
    return why


NATIVE_STATUS = _use_native()


def native_modules() -> list[str]:
    """The modules of this package running compiled (imported ones only)."""
    return sorted(
        name for name in NATIVE_MODULES
        if (m := sys.modules.get(f"{__name__}.{name}")) is not None
        and any(str(getattr(m, "__file__", "")).endswith(s) for s in importlib.machinery.EXTENSION_SUFFIXES)
    )
