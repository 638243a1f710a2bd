"""The models shipped in the package (cleaner/models): where they are and their names.

Apart from cleaner.label.model so that cleaner.settings can check a config's model names ([model.by_convention])
without importing the CRF code, which itself reads the config.
"""

from __future__ import annotations

from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parent / "models"
DEFAULT_MODEL_PATH = MODELS_DIR / "default.crfsuite"


def packaged_model_names() -> list[str]:
    """The names of the models shipped in cleaner/models (`default`, `cleaneval-2012`): each `NAME.crfsuite` with
    its sidecar `NAME.crfsuite.json` (a model's companion files, the marker typer and first pass, have none)."""
    return sorted(p.stem for p in MODELS_DIR.glob("*.crfsuite") if p.with_name(p.name + ".json").exists())


def packaged_model_path(name: str) -> Path:
    """The file of the packaged model `name`."""
    return MODELS_DIR / (name + ".crfsuite")
