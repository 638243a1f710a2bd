"""The CRF model: train, save, load and tag. No pickles anywhere.

A model is two files: `NAME.crfsuite` (CRFsuite's own binary format) and
`NAME.crfsuite.json` (the sidecar: labels, feature version and families, the [segment]
and [features] config it was trained with and its hash, the training-data manifest hash,
hyper-parameters and cross-validation figures). The sidecar's feature config is used at
tagging time, so a model always sees the features it was trained on whatever the
runtime config says; the runtime config still decides limits and decoding.

`CrfModel` holds the bytes (cheap to broadcast) and opens its taggers lazily, once per
process: a stacked model's two passes share one attribute vocabulary, so a page's features
are named once as attribute ids (cleaner.crf) and each pass scores the same rows.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pycrfsuite

from .config import FEATURE_SECTIONS, Config, load_config
from .convention import ConventionError, Conventions
from .crf import (
    AttributeIds,
    ConjoinedIds,
    CrfsuiteModel,
    FlatRows,
    ScoringTagger,
    Vocabulary,
    WindowRows,
    encode_attribute,
    read_crfsuite,
)
from .decide import DecisionSettings, decide
from .features import DEFAULT_FAMILIES, FAMILIES, FEATURE_VERSION, FeatureExtractor
from .labels import LABELS, OTHER
from .markers import MarkerSettings, MarkerTyper
from .packaged import DEFAULT_MODEL_PATH, packaged_model_names, packaged_model_path
from .segment import PageMarks
from .stacking import FIRST_PASS_LABELS, StackingSettings, first_pass_attributes, first_pass_ids

ATTRIBUTE_ENCODING = "blake2b-48"


class AttributeCodec(dict):
    """Readable attribute -> a short stable code, as the model file stores it.

    Training hands CRFsuite these codes (tagging names attributes by ids instead, cleaner.crf).
    CRFsuite looks attribute names up in a string-keyed tree; readable names share long
    prefixes ("-1:char.alpha.rel=...") so every comparison scans deep into both strings.
    12-hex-digit codes differ in their first characters: CRFsuite took pages ~3x faster with
    the same labels, and the files are smaller. Codes are computed once per distinct attribute
    and cached; the cache is bounded because id/class tokens are an open vocabulary on a real
    crawl. Codes are ASCII bytes: CRFsuite reads bytes as they are, where each str would be
    UTF-8 encoded again.
    """

    MAX_ENTRIES = 150_000  # ~20 MB at most

    def __missing__(self, key: str) -> bytes:
        if len(self) >= self.MAX_ENTRIES:
            self.clear()
        code = self[key] = encode_attribute(key)
        return code

    def encode(self, rows: list[list[str]]) -> list[list[bytes]]:
        get = self.__getitem__
        return [list(map(get, row)) for row in rows]


CODEC = AttributeCodec()


class Labelling(NamedTuple):
    """A page's final block labels and what the CRF said of them (CrfModel.label): everything a caller
    reads of a labelling is here, computed in the one call, so nothing is read from a tagger later."""

    labels: list[str]
    probabilities: list[float]  # the marginal probability of each block's label
    how: str  # how the labels were decided: viterbi, threshold or fallback (cleaner.decide)
    p_other: list[float]  # each block's marginal P(other): 1 - P(content)
    # Every label's marginal per block (before the marker typer re-types), when asked for.
    marginals: list[dict[str, float]] | None = None

    @property
    def p_content(self) -> list[float]:
        """Each block's P(content), as cleaner.assemble reads it."""
        return [1.0 - p for p in self.p_other]


class ModelError(ValueError):
    """A model file is missing, unreadable or inconsistent with its sidecar."""


@dataclass
class CrfModel:
    data: bytes
    meta: dict[str, Any] = field(default_factory=dict)
    # The marker typer (cleaner.markers), a second CRFsuite model; None = keep the block CRF's markers.
    markers: bytes | None = None
    # The first-pass block CRF whose labelling `data` also reads (cleaner.stacking); None = one pass.
    first_pass: bytes | None = None
    # The opened taggers, one set per thread: a CRFsuite tagger holds the sequence it last tagged.
    _threads: threading.local = field(default_factory=threading.local, repr=False, compare=False)
    _extractor: FeatureExtractor | None = field(default=None, repr=False, compare=False)
    _feature_config: tuple | None = field(default=None, repr=False, compare=False)

    @functools.cached_property
    def hash(self) -> str:
        # Computed once: hashing a few MB per page would cost a millisecond each time. The
        # typer and the first pass are part of what the hash names (they change the output).
        h = hashlib.sha256(self.data)
        if self.markers:
            h.update(b"\0markers\0" + self.markers)
        if self.first_pass:
            h.update(b"\0first_pass\0" + self.first_pass)
        return h.hexdigest()[:16]

    @functools.cached_property
    def stacking(self) -> StackingSettings | None:
        info = self.meta.get("stacking")
        if not self.first_pass or not info:
            return None
        return StackingSettings.from_meta(info["settings"])

    @functools.cached_property
    def typer(self) -> MarkerTyper | None:
        info = self.meta.get("markers")
        if not self.markers or not info:
            return None
        return MarkerTyper(self.markers, MarkerSettings.from_meta(info["settings"]))

    @property
    def labels(self) -> list[str]:
        return list(self.meta.get("labels", LABELS))

    @functools.cached_property
    def conventions(self) -> Conventions | None:
        """The annotation conventions a convention-aware model was trained with (else None)."""
        return Conventions.from_meta(self.meta.get("conventions"))

    def check_convention(self, name: str | None) -> str | None:
        """The convention the model will be given for `name` ("" / None: its default); raises
        ConventionError for a name it does not know, or any name for a model without conventions."""
        if self.conventions is None:
            if name:
                raise ConventionError(f"model {self.hash} was not trained with annotation conventions "
                                      f"(cleaner train --conventions): it cannot clean by convention {name!r}; "
                                      "leave --convention out, or use a convention-aware model (the packaged "
                                      "default)")
            return None
        return self.conventions.resolve(name)

    def tagging_convention(self, config: Config, asked: str | None = None) -> str | None:
        """The convention this model tags pages with: `asked` (`--convention`, `clean_html(convention=...)`),
        else `config`'s [model] convention (conf/default.toml: main). A model trained without conventions
        tags without one: it passes over the packaged config's value (so that it runs with the default
        config), and refuses a convention asked of it, by `asked` or by an overlay that sets another
        [model] convention, with a ConventionError; so does a convention-aware model for a name it does not
        know."""
        name = asked or config["model"].get("convention") or None
        if self.conventions is None and not asked and name == load_config()["model"].get("convention"):
            return None
        return self.check_convention(name)

    @property
    def feature_version(self) -> str:
        return str(self.meta.get("feature_version", FEATURE_VERSION))

    def feature_config(self, runtime: Config | None = None) -> Config:
        """The runtime config with the model's own [segment]/[features] (and its typer's
        [markers]) laid over it."""
        runtime = runtime or load_config()
        own = self.meta.get("feature_config")
        typer = self.meta.get("markers")
        if typer:  # the typer reads blocks as it was trained to
            own = dict(own or {}, markers=dict(typer["settings"], enabled=True))
        if not own:
            return runtime
        cached = self._feature_config
        if cached is not None and cached[0] is runtime:  # merging deep-copies: once per config
            return cached[1]
        merged = runtime.overlay(own, runtime.source + "+model")
        self._feature_config = (runtime, merged)
        return merged

    def extractor(self, runtime: Config | None = None) -> FeatureExtractor:
        if self._extractor is None or runtime is not None:
            families = tuple(self.meta.get("families", DEFAULT_FAMILIES))
            ex = FeatureExtractor(self.feature_config(runtime), families)
            if runtime is not None:
                return ex
            self._extractor = ex
        return self._extractor

    def features(self, blocks, stats=None, page: PageMarks | None = None) -> list[list] | WindowRows:
        """The blocks' attributes as `tag` reads them: as attribute ids (`attribute_ids`) kept apart
        from the neighbour window (cleaner.crf.WindowRows), so a block's attributes are named once
        however many neighbours and passes read them. A convention-aware model's are named with
        `convention_ids`, whose pair ids let `tag` lay out the rows of the convention it is asked for
        from the ids (WindowRows.conjoined); readable rows only for conventions that could conjoin a
        neighbour's attributes, which that cannot lay out. `page` is what the page's markup says of it
        (Segmentation.page), for a model that reads the `cue` family."""
        ex = self.extractor()
        codec: AttributeIds = self.attribute_ids
        if self.conventions is not None:
            if not self.conventions.conjoins_own_only:
                return ex.extract(blocks, stats, None, page)
            codec = self.convention_ids
        return WindowRows(ex.extract_parts(blocks, stats, codec, page), codec, ex)

    @property
    def encoded(self) -> bool:
        return self.meta.get("attribute_encoding") == ATTRIBUTE_ENCODING

    @functools.cached_property
    def _parsed(self) -> tuple[Vocabulary, CrfsuiteModel, CrfsuiteModel | None]:
        """The model files read (cleaner.crf), and the vocabulary of attribute ids the passes share."""
        main = read_crfsuite(self.data)
        first = read_crfsuite(self.first_pass) if self.first_pass else None
        return Vocabulary([main] + ([first] if first else [])), main, first

    @functools.cached_property
    def attribute_ids(self) -> AttributeIds:
        """Readable attribute -> the id this model's taggers score it by (a codec for the extractor)."""
        return AttributeIds(self._parsed[0], self.encoded)

    @functools.cached_property
    def convention_ids(self) -> ConjoinedIds:
        """A convention-aware model's `attribute_ids` with a pair id for each attribute its conventions
        conjoin (cleaner.crf.ConjoinedIds): what `features` names such a model's attributes with."""
        conventions = self.conventions
        if conventions is None:
            raise ModelError(f"model {self.hash} was not trained with annotation conventions")
        copies = tuple(map(conventions.copy_prefix, conventions.names))
        return ConjoinedIds(self._parsed[0], self.encoded, copies, conventions.attributes)

    def __getstate__(self) -> dict[str, Any]:
        """What pickles (a broadcast): the model's bytes and sidecar; each process opens its own taggers."""
        return {"data": self.data, "meta": self.meta, "markers": self.markers, "first_pass": self.first_pass}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def tagger(self) -> ScoringTagger:
        """This thread's tagger of the (second-pass) block CRF."""
        tagger = getattr(self._threads, "main", None)
        if tagger is None:
            vocabulary, main, _ = self._parsed
            tagger = self._threads.main = ScoringTagger(self.data, vocabulary, main)
        return tagger

    def open(self) -> CrfModel:
        """Open every CRFsuite model it holds now (once per process), not on the first page."""
        self.tagger()
        _ = self.typer  # (a cached property: reading it opens the typer)
        if self.first_pass:
            self.first_tagger()
        return self

    def first_tagger(self) -> ScoringTagger:
        """This thread's tagger of the first pass of a stacked model (cleaner.stacking)."""
        tagger = getattr(self._threads, "first", None)
        if tagger is None:
            vocabulary, _, first = self._parsed
            if self.first_pass is None:
                raise ModelError(f"model {self.hash} has no first pass: it is not stacked")
            tagger = self._threads.first = ScoringTagger(self.first_pass, vocabulary, first)
        return tagger

    @functools.cached_property
    def _both_states(self) -> np.ndarray:
        """A stacked model's first-pass and second-pass state weights side by side, (attributes,
        first labels + labels): both passes' scores of the same rows in one gather."""
        return np.ascontiguousarray(np.hstack([self.first_tagger().state, self.tagger().state]))

    def _first_pass_view(self, rows, word_counts, decision, own_counts=None, scores=None) -> list[list] | np.ndarray:
        """Per block, the attribute ids of the first pass's view of the page (cleaner.stacking); `rows`
        are ids, FlatRows or WindowRows, and `scores` the first pass's state scores of them when
        computed already. A first pass that reads only each block's own attributes is given just
        those when `own_counts` says which they are; given whole rows it labels the same (the
        neighbours' attributes have no weight in its model), only slower."""
        assert self.stacking is not None  # (called for stacked models only)
        first_rows = rows
        if not self.stacking.first_pass_neighbours:
            if isinstance(rows, WindowRows):
                first_rows = rows.own_only()
            elif own_counts is not None:
                first_rows = [row[:k] for row, k in zip(rows, own_counts)]
        return first_pass_view(self.first_tagger(), first_rows, self.stacking, word_counts, decision,
                               self.attribute_ids, scores)

    def tag(
        self, features: list[list[str]] | WindowRows, marginals: bool = True, convention: str | None = None,
        timings: dict[str, float] | None = None, word_counts: list[int] | None = None, decision=None,
    ) -> tuple[list[str], list[float]]:
        """Labels for a block sequence, and the marginal probability of each chosen label.

        `features`: readable attribute rows (FeatureExtractor.extract) or the model's own `features`.
        `convention` is for convention-aware models (`cleaner.convention`); None = the model's default.
        A stacked model's first pass is timed into `timings["first_pass"]` (ms) when given; one whose
        second pass reads the first pass's decided labels needs `word_counts` (and the `decision`
        settings, default DecisionSettings())."""
        if not features:
            return [], []
        conventions = self.conventions
        given: list[list[str]] | WindowRows | FlatRows = features
        if conventions is not None:
            if isinstance(features, WindowRows):  # (named with convention_ids: `features`)
                name = conventions.resolve(convention)
                bias = self.attribute_ids[conventions.bias(name)]
                given = features.conjoined(conventions.names.index(name), bias)
            else:
                given = conventions.apply(features, convention)
        elif convention:
            self.check_convention(convention)
        tagger = self.tagger()
        own_counts = getattr(given, "own_counts", None)  # (rows straight from FeatureExtractor.extract)
        rows: list[list[int]] | FlatRows | WindowRows
        if isinstance(given, (WindowRows, FlatRows)):
            rows = given
        else:  # (readable rows: as tests, training and inspection give them)
            rows = self.attribute_ids.encode(given)
            if self.stacking is not None and (own_counts is None or self.stacking.first_pass_neighbours):
                rows = FlatRows(rows)  # both passes read the whole rows: flattened once
        if self.stacking is not None:
            t = time.perf_counter()
            first = second = None
            if self.stacking.first_pass_neighbours:
                assert not isinstance(rows, list)  # (flattened above)
                # Both passes read the same rows: one gather over their weights side by side gives
                # both passes' state scores (-0.17 ms a page against one gather each).
                both = rows.sum(self._both_states)
                k = self.first_tagger().state.shape[1]
                first, second = both[:, :k], both[:, k:]
            view = self._first_pass_view(rows, word_counts, decision, own_counts, first)
            if timings is not None:
                timings["first_pass"] = (time.perf_counter() - t) * 1000
            if second is None:
                tagger.set(rows, view)
            else:
                tagger.set_scores(second + tagger.scores(view))
        else:
            tagger.set(rows)
        labels = tagger.tag()
        if not marginals:
            return labels, []
        return labels, [tagger.marginal(y, i) for i, y in enumerate(labels)]

    def label(
        self, features, word_counts: list[int], settings: DecisionSettings, *, convention: str | None = None,
        layout=None, texts: list[str] | None = None, marginals: bool = False,
        timings: dict[str, float] | None = None,
    ) -> Labelling:
        """One page's labelling, whole: Viterbi labels refined by the marginals (cleaner.decide), re-typed
        by the marker typer when the model has one and the page's `layout` (block i -> BlockLayout, as
        MarkerTyper.layout_of gives) and `texts` are given, the probability of each final label, how the
        labels were decided, every block's P(other), and with `marginals` every label's marginal of every
        block. Every figure is read from this thread's tagger inside the call: the result owns all it
        says, and a model can label pages in several threads at once."""
        labels, _ = self.tag(features, marginals=False, convention=convention, timings=timings,
                             word_counts=word_counts, decision=settings)
        if not labels:
            return Labelling(labels, [], "viterbi", [], [] if marginals else None)
        tagger = self.tagger()
        marginal = tagger.marginal
        # Every block needs P(other) and the probability of its final label, but only the
        # blocks the decision rescues need the whole row: 2 marginals a block instead of 5
        # (-0.5 ms on a 300-block page).
        p_other = [marginal(OTHER, i) for i in range(len(labels))]
        rows = _MarginalRows(tagger)
        labels, how = decide(labels, rows, word_counts, settings, p_other=p_other)
        table = [rows[i] for i in range(len(labels))] if marginals else None
        probabilities = [p_other[i] if y == OTHER else marginal(y, i) for i, y in enumerate(labels)]
        typer = self.typer
        if typer is not None and layout is not None and texts is not None:
            t = time.perf_counter()
            retyped = typer.retype(labels, marginal, layout, texts, word_counts)
            probabilities = [p if new == old else marginal(new, i)
                             for i, (p, old, new) in enumerate(zip(probabilities, labels, retyped))]
            labels = retyped
            if timings is not None:
                timings["markers"] = (time.perf_counter() - t) * 1000
        return Labelling(labels, probabilities, how, p_other, table)

    # -- files ---------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = dict(self.meta, model_hash=self.hash)
        _atomic_write(path, self.data)
        for key, suffix, attr, _ in COMPANIONS:
            data = getattr(self, attr)
            if data and meta.get(key):
                _atomic_write(_companion_path(path, suffix), data)
                meta[key] = dict(meta[key], sha256=hashlib.sha256(data).hexdigest())
            else:
                meta.pop(key, None)
        _atomic_write(sidecar_path(path), (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode())
        return path


def first_pass_view(
    tagger, rows, settings: StackingSettings, word_counts: list[int] | None = None,
    decision: DecisionSettings | None = None, codec: AttributeCodec | AttributeIds | None = None,
    scores: np.ndarray | None = None,
) -> list[list] | np.ndarray:
    """What a second pass reads of the first pass's labelling of a page (cleaner.stacking), the
    same in training (an inner fold's first pass) and in tagging: `tagger` (a ScoringTagger given
    attribute ids, or a CRFsuite tagger given codes) labels the `rows`, its labels are decided
    (cleaner.decide: this needs the blocks' `word_counts`), and the view
    is named with `codec` when given: with attribute ids (AttributeIds), as an (n, columns) array of ids.
    `scores`: the (blocks, labels) state scores of `rows` for a ScoringTagger, when computed already."""
    if scores is None:
        tagger.set(rows)
    else:
        tagger.set_scores(scores)
    labels = tagger.tag()
    p_other = [tagger.marginal(OTHER, i) for i in range(len(labels))]
    if word_counts is None:
        raise ValueError("this stacked model's first pass is decided (cleaner.decide): tag() needs the "
                         "blocks' word counts")
    # (without the F1-optimal threshold, which models were not trained to read from their first pass)
    decision = replace(decision or DecisionSettings(), f1_optimal_threshold=False)
    labels, _ = decide(labels, _MarginalRows(tagger), word_counts, decision, p_other=p_other)
    if isinstance(codec, AttributeIds):
        return first_pass_ids(labels, p_other, settings, codec)
    return first_pass_attributes(labels, p_other, settings, codec)


def open_tagger(data: bytes) -> pycrfsuite.Tagger:
    tagger = pycrfsuite.Tagger()
    tagger.open_inmemory(data)
    return tagger


class _MarginalRows:
    """`rows[i]` = {label: marginal} of block i of the sequence last tagged, computed on access."""

    def __init__(self, tagger):
        self.tagger = tagger
        self.names = tagger.labels()

    def __getitem__(self, i: int) -> dict[str, float]:
        return {y: self.tagger.marginal(y, i) for y in self.names}


def sidecar_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


# The files a model may have beside its CRF: (sidecar key, file suffix, CrfModel field, what it is).
COMPANIONS = (
    ("markers", ".markers.crfsuite", "markers", "marker typer"),
    ("stacking", ".pass1.crfsuite", "first_pass", "first-pass CRF"),
)


def _companion_path(path: Path, suffix: str) -> Path:
    return path.with_name(path.stem + suffix)


def markers_path(path: Path) -> Path:
    """Where the marker typer of the model at `path` is stored (`default.crfsuite` ->
    `default.markers.crfsuite`)."""
    return _companion_path(path, ".markers.crfsuite")


def first_pass_path(path: Path) -> Path:
    """Where the first-pass CRF of the stacked model at `path` is stored (`default.crfsuite` ->
    `default.pass1.crfsuite`)."""
    return _companion_path(path, ".pass1.crfsuite")


def _model_files(path: Path) -> list[tuple[Path, str]]:
    """(file, its name relative to the model's stem) of every file of the saved model."""
    meta = json.loads(sidecar_path(path).read_text())
    files = [(path, path.suffix), (sidecar_path(path), path.suffix + ".json")]
    return files + [(_companion_path(path, suffix), suffix) for key, suffix, _, _ in COMPANIONS if meta.get(key)]


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


def _read_part(path: Path, model_path: Path, what: str, info: dict) -> bytes:
    """A model's companion file, checked against the sha256 its sidecar records."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelError(f"cannot read the {what} {path} of model {model_path}: {exc.strerror or exc}") from exc
    if hashlib.sha256(data).hexdigest() != info.get("sha256"):
        raise ModelError(f"{what} {path} does not match the sidecar of model {model_path}")
    return data


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="." + path.name)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(tmp, 0o644)  # mkstemp makes 0600; a model is meant to be shared
    os.replace(tmp, path)


_LOADED: dict[str, CrfModel] = {}


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
    """The model that cleans pages, and by which convention (model_for_convention)."""

    model: CrfModel = field(repr=False)
    path: Path | None  # its file (what a run record names); None: a model handed over in memory
    convention: str | None  # what the model is given as input; None: a model trained without conventions
    chosen: str | None  # the convention the pages are cleaned by; None: a model without conventions given by name

    def config_for(self, config: Config) -> Config:
        """`config` as this model cleans with it: its [model] convention the one the model tags with ("" for a
        model without conventions), so that a process handed the model and this config (a Spark worker, the
        datatrove step) tags as the caller resolved."""
        return config.overlay({"model": {"convention": self.convention or ""}})


def model_for_convention(config: Config, model: CrfModel | str | Path | None = None,
                         convention: str | None = None) -> ServingModel:
    """The model that cleans pages by `convention` (`--convention`, `clean_html(convention=...)`; None: `config`'s
    [model] convention), the one place every caller (cleaner clean and eval, clean_html, the WARC jobs, the
    datatrove step) resolves it. `model` given (a CrfModel, a file or a packaged model's name, `--model M`): M
    cleans, by the convention if M is convention-aware; M refuses a convention it does not know, or any convention
    asked of it if it was trained without (CrfModel.tagging_convention). No `model`: the packaged model that
    `config`'s [model.by_convention] names for the convention (the packaged default for a convention it does not
    list, which refuses one it does not know); a model without conventions serving one tags without it, as it was
    trained: it is that convention's model. Raises ModelError (an unreadable model) or ConventionError."""
    if model:
        crf = model if isinstance(model, CrfModel) else load_model(model)
        path = None if isinstance(model, CrfModel) else resolve_model_path(model)
        tags = crf.tagging_convention(config, convention)
        return ServingModel(crf, path, tags, tags)
    chosen = convention or config["model"].get("convention") or ""
    served = config["model"].get("by_convention", {}).get(chosen)
    path = packaged_model_path(served) if served else DEFAULT_MODEL_PATH
    crf = load_model(path)
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
    parts = {attr: _read_part(_companion_path(path, suffix), path, what, meta[key]) if meta.get(key) else None
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


def train_crf(
    X: list[list[list[str]]],
    y: list[list[str]],
    *,
    c1: float,
    c2: float,
    max_iterations: int,
    verbose: bool = False,
) -> bytes:
    """Train a linear-chain CRF with L-BFGS (via sklearn-crfsuite); returns the model bytes.

    Attributes are stored encoded (`AttributeCodec`; record `attribute_encoding` in the
    sidecar). CRFsuite's L-BFGS is deterministic: the same sequences in the same order
    give the same model bytes.
    """
    import sklearn_crfsuite

    encoded = [CODEC.encode(x) for x in X]
    with tempfile.TemporaryDirectory(prefix="crf-") as tmp:
        model_file = os.path.join(tmp, "model.crfsuite")
        crf = sklearn_crfsuite.CRF(
            algorithm="lbfgs",
            c1=c1,
            c2=c2,
            max_iterations=max_iterations,
            all_possible_transitions=True,
            model_filename=model_file,
            verbose=verbose,
        )
        crf.fit(encoded, y)
        return Path(model_file).read_bytes()


def attribute_weights(model: CrfModel) -> dict[tuple[str, str], float]:
    """State-feature weights keyed by (attribute as stored, label); see `attribute_code`."""
    return model._parsed[1].state_weights()


def attribute_code(model: CrfModel, attribute: str) -> str:
    """The name under which `attribute` is stored in this model's file."""
    return CODEC[attribute].decode() if model.encoded else attribute


def feature_config_sections(config: Config) -> dict[str, Any]:
    return {s: config.data[s] for s in FEATURE_SECTIONS}
