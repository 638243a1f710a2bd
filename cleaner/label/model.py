"""The CRF model: load it, by file or by packaged name, and the model that serves a convention. No pickles
anywhere.

A model is two files: `NAME.crfsuite` (CRFsuite's own binary format) and
`NAME.crfsuite.json` (the sidecar: labels, feature version and families, the [segment]
and [features] config it was trained with and its hash, the training-data manifest hash,
hyper-parameters and cross-validation figures). The sidecar's feature config is used at
tagging time, so a model always sees the features it was trained on whatever the
runtime config says; the runtime config still decides limits and decoding.

The model is in several modules, each one role, and this one gives their public names too:
`CrfModel` and its `Labelling` (cleaner.label.crf_model: how a model labels a page), its files
(cleaner.label.model_files: sidecar, companions, copying, `ModelError`), the codes its file stores
attributes under and training CRFsuite on them (cleaner.label.attribute_codes), the packaged models
(cleaner.packaged).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..config import Config
from ..packaged import DEFAULT_MODEL_PATH, packaged_model_names, packaged_model_path
from ..page.doctype import declares_html5
from ..page.features import FAMILIES
from .attribute_codes import ATTRIBUTE_ENCODING, CODEC, AttributeCodec, open_tagger, train_crf
from .crf_model import CrfModel, Labelling, attribute_code, attribute_weights, first_pass_view
from .model_files import (
    COMPANIONS,
    ModelError,
    companion_path,
    copy_model,
    feature_config_sections,
    first_pass_path,
    markers_path,
    model_files,
    read_companion,
    sidecar_path,
)
from .stacking import FIRST_PASS_LABELS

__all__ = [
    # defined here
    "ServingModel", "load_model", "model_for_convention", "resolve_model_path",
    # re-exported: defined in cleaner.label.crf_model, cleaner.label.model_files, cleaner.label.attribute_codes,
    # cleaner.packaged
    "CrfModel", "Labelling", "attribute_code", "attribute_weights", "first_pass_view",
    "COMPANIONS", "ModelError", "copy_model", "feature_config_sections", "first_pass_path", "markers_path",
    "model_files", "sidecar_path",
    "ATTRIBUTE_ENCODING", "CODEC", "AttributeCodec", "open_tagger", "train_crf",
    "DEFAULT_MODEL_PATH", "packaged_model_names", "packaged_model_path",
]


_LOADED: dict[str, CrfModel] = {}
# Packaged models by their file, for model_for_convention: clean_html without a model resolves one per page, and
# load_model's realpath of the file (a few system calls, ~30 us) is not work to repeat for every page.
_PACKAGED: dict[Path, CrfModel] = {}


def resolve_model_path(spec: str | Path | None) -> Path:
    """The model file meant by `spec`: a path to a file, else the name of a packaged model
    (`cleaneval-2012`, `cleaneval-2012.crfsuite`) from any working directory, including the checkout-relative
    `cleaner/models/cleaneval-2012.crfsuite` of older docs. A spec that is neither is returned as a path
    (loading it then fails with a message naming it)."""
    if not spec:
        return DEFAULT_MODEL_PATH
    path = Path(spec)
    if path.exists():
        return path
    name = path.name[: -len(".crfsuite")] if path.name.endswith(".crfsuite") else path.name
    under_models = path.parent == Path(".") or path.parent.parts[-2:] == ("cleaner", "models")
    if under_models and name in packaged_model_names():
        return packaged_model_path(name)
    return path


@dataclass(frozen=True)
class ServingModel:
    """The model that cleans pages, and by which convention (model_for_convention); with `html5`, the model that
    cleans the pages in HTML5 markup instead (for_page)."""

    model: CrfModel = field(repr=False)
    path: Path | None  # its file (what a run record names); None: a model handed over in memory
    convention: str | None  # what the model is given as input; None: a model trained without conventions
    chosen: str | None  # the convention the pages are cleaned by; None: a model without conventions given by name
    # The model of the same convention for the pages that declare HTML5 markup ([model.html5_by_convention]; None:
    # this one cleans every page). Its own `convention` is what it is given: a convention-aware model serving a
    # convention whose other pages go to a model trained without conventions.
    html5: ServingModel | None = None

    def for_page(self, data: bytes) -> ServingModel:
        """The model that cleans the page `data` (its raw bytes): `html5` for a page in HTML5 markup
        (cleaner.page.doctype), else this one."""
        return self.html5 if self.html5 is not None and declares_html5(data) else self

    @property
    def served(self) -> tuple[ServingModel, ...]:
        """Every model that cleans pages: this one, then the HTML5 pages' (what a run record lists)."""
        return (self,) if self.html5 is None else (self, self.html5)

    @property
    def hash(self) -> str:
        """What the pages' text depends on of the models: the model's hash, with the HTML5 pages' model's after it
        (an output's settings: a run whose pages are cleaned by other models does not write into it)."""
        return "+".join(served.model.hash for served in self.served)

    def config_for(self, config: Config) -> Config:
        """`config` as this model cleans with it: its [model] convention the one the model tags with ("" for a
        model without conventions), so that a process handed the model and this config tags as the caller
        resolved. (The HTML5 pages' model carries its own: hand over the ServingModel itself when it has one.)"""
        return config.overlay({"model": {"convention": self.convention or ""}})


def model_for_convention(config: Config, model: CrfModel | str | Path | None = None,
                         convention: str | None = None) -> ServingModel:
    """The model that cleans pages by `convention` (`--convention`, `clean_html(convention=...)`; None: `config`'s
    [model] convention), the one place every caller (cleaner clean and eval, clean_html, the WARC jobs, the
    datatrove step) resolves it. `model` given (a CrfModel, a file or a packaged model's name, `--model M`): M
    cleans every page, by the convention if M is convention-aware; M refuses a convention it does not know, or any
    convention asked of it if it was trained without (CrfModel.tagging_convention). No `model`: the packaged model
    that `config`'s [model.by_convention] names for the convention (the packaged default for a convention it does
    not list, which refuses one it does not know), and for the pages in HTML5 markup the one
    [model.html5_by_convention] names, where it names another; a model without conventions serving one tags
    without it, as it was trained: it is that convention's model. Raises ModelError (an unreadable model) or
    ConventionError."""
    if model:
        crf = model if isinstance(model, CrfModel) else load_model(model)
        path = None if isinstance(model, CrfModel) else resolve_model_path(model)
        tags = crf.tagging_convention(config, convention)
        return ServingModel(crf, path, tags, tags)
    chosen = convention or config["model"].get("convention") or ""
    served = config["model"].get("by_convention", {}).get(chosen)
    serving = _packaged(packaged_model_path(served) if served else DEFAULT_MODEL_PATH, chosen)
    html5 = config["model"].get("html5_by_convention", {}).get(chosen)
    if html5 and packaged_model_path(html5) != serving.path:
        serving = replace(serving, html5=_packaged(packaged_model_path(html5), chosen))
    return serving


def _packaged(path: Path, chosen: str) -> ServingModel:
    """The packaged model `path` serving the convention `chosen` ("" for the config's default)."""
    cached = _PACKAGED.get(path)
    crf = cached if cached is not None else _PACKAGED.setdefault(path, load_model(path))
    if crf.conventions is None:
        return ServingModel(crf, path, None, chosen or None)
    tags = crf.check_convention(chosen)
    return ServingModel(crf, path, tags, tags)


def load_model(path: str | Path | None = None) -> CrfModel:
    """Load a model (the packaged default when `path` is None; a packaged model by name,
    resolve_model_path); cached per process."""
    path = resolve_model_path(path)
    key = str(path.resolve())
    if key in _LOADED:
        return _LOADED[key]
    try:
        data = path.read_bytes()
    except OSError as exc:
        hint = ""
        if not path.exists():
            hint = f" (give a model file, or the name of a packaged model: {', '.join(packaged_model_names())})"
        raise ModelError(f"cannot read model {path}: {exc.strerror or exc}{hint}") from exc
    side = sidecar_path(path)
    try:
        meta = json.loads(side.read_text())
    except OSError as exc:
        raise ModelError(f"cannot read model sidecar {side}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise ModelError(f"model sidecar {side} is not valid JSON: {exc}") from exc
    parts = {attr: read_companion(companion_path(path, suffix), path, what, meta[key]) if meta.get(key) else None
             for key, suffix, attr, what in COMPANIONS}
    model = CrfModel(data, meta, markers=parts["markers"], first_pass=parts["first_pass"])
    expected = meta.get("model_hash")
    if expected and expected != model.hash:
        raise ModelError(f"model {path} does not match its sidecar (hash {model.hash} != {expected})")
    gone = [f for f in meta.get("families", ()) if f not in FAMILIES]
    if gone:  # it would read fewer attributes than it was trained on, silently: refuse it
        raise ModelError(f"model {path} was trained with feature families this version no longer has "
                         f"({', '.join(gone)}; docs/ablation.md): retrain it")
    read = meta["stacking"]["settings"].get("first_pass_labels", "viterbi") if meta.get("stacking") else None
    if read not in (None, FIRST_PASS_LABELS):  # its second pass learnt from a first-pass labelling no longer made
        raise ModelError(f"model {path} is stacked on the first pass's {read} labels, a variant this version "
                         f"no longer has (docs/ablation.md): retrain it")
    try:
        model.open()
    except Exception as exc:  # CRFsuite raises ValueError/IOError on a corrupt file
        raise ModelError(f"model {path} is not a valid CRFsuite model: {exc}") from exc
    _LOADED[key] = model
    return model
