"""A model's files on disk: the CRF (`NAME.crfsuite`), its sidecar (`NAME.crfsuite.json`) and the companions
its sidecar names (the marker typer, a stacked model's first pass); where each is, copying them together,
reading a companion checked against its sidecar, writing each atomically. cleaner.label.model loads them into a
CrfModel (cleaner.label.crf_model), whose `save` writes them."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..config import FEATURE_SECTIONS, Config


class ModelError(ValueError):
    """A model file is missing, unreadable or inconsistent with its sidecar."""



def sidecar_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


# The files a model may have beside its CRF: (sidecar key, file suffix, CrfModel field, what it is).
COMPANIONS = (
    ("markers", ".markers.crfsuite", "markers", "marker typer"),
    ("stacking", ".pass1.crfsuite", "first_pass", "first-pass CRF"),
)


def companion_path(path: Path, suffix: str) -> Path:
    return path.with_name(path.stem + suffix)


def markers_path(path: Path) -> Path:
    """Where the marker typer of the model at `path` is stored (`default.crfsuite` ->
    `default.markers.crfsuite`)."""
    return companion_path(path, ".markers.crfsuite")


def first_pass_path(path: Path) -> Path:
    """Where the first-pass CRF of the stacked model at `path` is stored (`default.crfsuite` ->
    `default.pass1.crfsuite`)."""
    return companion_path(path, ".pass1.crfsuite")


def _model_files(path: Path) -> list[tuple[Path, str]]:
    """(file, its name relative to the model's stem) of every file of the saved model."""
    meta = json.loads(sidecar_path(path).read_text())
    files = [(path, path.suffix), (sidecar_path(path), path.suffix + ".json")]
    return files + [(companion_path(path, suffix), suffix) for key, suffix, _, _ in COMPANIONS if meta.get(key)]


def model_files(path: str | Path) -> list[Path]:
    """Every file of the saved model at `path`: the CRF, its sidecar, and the marker typer and
    first pass its sidecar names (a model is copied or shipped as all of them)."""
    return [f for f, _ in _model_files(Path(path))]


def copy_model(src: str | Path, dst: str | Path) -> Path:
    """Copy the model at `src` (all its files) to `dst`, renaming its companions to match."""
    src, dst = Path(src), Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    for f, suffix in _model_files(src):
        dst.with_name(dst.stem + suffix).write_bytes(f.read_bytes())
    return dst


def read_companion(path: Path, model_path: Path, what: str, info: dict) -> bytes:
    """A model's companion file, checked against the sha256 its sidecar records."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelError(f"cannot read the {what} {path} of model {model_path}: {exc.strerror or exc}") from exc
    if hashlib.sha256(data).hexdigest() != info.get("sha256"):
        raise ModelError(f"{what} {path} does not match the sidecar of model {model_path}")
    return data


def atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="." + path.name)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(tmp, 0o644)  # mkstemp makes 0600; a model is meant to be shared
    os.replace(tmp, path)


def feature_config_sections(config: Config) -> dict[str, Any]:
    """The config sections that make a model's features ([segment], [features]), as its sidecar records them."""
    return {s: config.data[s] for s in FEATURE_SECTIONS}
