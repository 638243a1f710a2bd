"""`CrfModel`: a CRF model's bytes and sidecar, and how it labels a page (`label` -> `Labelling`).

`CrfModel` holds the bytes (cheap to broadcast) and opens its taggers lazily, once per
process: a stacked model's two passes share one attribute vocabulary, so a page's features
are named once as attribute ids (cleaner.label.crf) and each pass scores the same rows. Its files
are cleaner.label.model_files'; cleaner.label.model loads one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..config import Config, load_config, with_legacy_values
from ..labels import LABELS, OTHER
from ..page.features import DEFAULT_FAMILIES, FEATURE_VERSION, FeatureExtractor
from ..page.page_marks import PageMarks
from .attribute_codes import ATTRIBUTE_ENCODING, CODEC, AttributeCodec
from .convention import ConventionError, Conventions
from .crf import (
    AttributeIds,
    ConjoinedIds,
    FlatRows,
    ScoringTagger,
    ThreadTaggers,
    Vocabulary,
    WindowRows,
    read_only,
    window_rows,
)
from .crfsuite_file import CrfsuiteModel, read_crfsuite
from .decide import DecisionSettings, decide
from .markers import MarkerSettings, MarkerTyper
from .model_files import COMPANIONS, ModelError, atomic_write, companion_path, sidecar_path
from .stacking import StackingSettings, first_pass_attributes, first_pass_ids


class Labelling(NamedTuple):
    """A page's final block labels and what the CRF said of them (CrfModel.label): everything a caller
    reads of a labelling is here, computed in the one call, so nothing is read from a tagger later."""

    labels: list[str]
    probabilities: list[float]  # the marginal probability of each block's label
    how: str  # how the labels were decided: viterbi, threshold or fallback (cleaner.label.decide)
    p_other: list[float]  # each block's marginal P(other): 1 - P(content)
    # Every label's marginal per block (before the marker typer re-types), when asked for.
    marginals: list[dict[str, float]] | None = None

    @property
    def p_content(self) -> list[float]:
        """Each block's P(content), as cleaner.output.assemble reads it."""
        return [1.0 - p for p in self.p_other]



class _OpenedFiles:
    """A CrfModel's files read: the CRFs, the vocabulary of attribute ids their passes share, and each CRF's
    taggers (one per thread, over weights built once)."""

    def __init__(self, data: bytes, first_pass: bytes | None):
        self.main = read_crfsuite(data)
        self.first = read_crfsuite(first_pass) if first_pass else None
        self.vocabulary = Vocabulary([self.main] + ([self.first] if self.first else []))
        self.main_taggers = ThreadTaggers(self.vocabulary, self.main)
        self.first_taggers = ThreadTaggers(self.vocabulary, self.first) if self.first else None


@dataclass
class CrfModel:
    data: bytes
    meta: dict[str, Any] = field(default_factory=dict)
    # The marker typer (cleaner.label.markers), a second CRFsuite model; None = keep the block CRF's markers.
    markers: bytes | None = None
    # The first-pass block CRF whose labelling `data` also reads (cleaner.label.stacking); None = one pass.
    first_pass: bytes | None = None
    # The files read (`_opened`: once, whichever threads ask first), with each thread's taggers.
    _opened_files: _OpenedFiles | None = field(default=None, init=False, repr=False, compare=False)
    _opening: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)
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
        cached = self._feature_config
        if cached is not None and cached[0] is runtime:  # merging deep-copies: once per config
            return cached[1]
        own = self.meta.get("feature_config")
        typer = self.meta.get("markers")
        if typer:  # the typer reads blocks as it was trained to
            own = dict(own or {}, markers=dict(typer["settings"], enabled=True))
        own = with_legacy_values(own)
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

    def features(self, blocks, counts=None, page: PageMarks | None = None) -> list[list] | WindowRows:
        """The attributes of the blocks (a BlockTable) as `tag` reads them: as attribute ids (`attribute_ids`) kept
        apart from the neighbour window (cleaner.label.crf.WindowRows), so a block's attributes are named once
        however many neighbours and passes read them. A convention-aware model's are named with
        `convention_ids`, whose pair ids let `tag` lay out the rows of the convention it is asked for
        from the ids (WindowRows.conjoined); readable rows only for conventions that could conjoin a
        neighbour's attributes, which that cannot lay out. `page` is what the page's markup says of it
        (Segmentation.page), for a model that reads the `cue` family."""
        ex = self.extractor()
        codec = self.naming_codec()
        if codec is None:
            return ex.extract(blocks, counts, None, page)
        return window_rows(ex, blocks, counts, codec, page)

    @property
    def encoded(self) -> bool:
        return self.meta.get("attribute_encoding") == ATTRIBUTE_ENCODING

    def _opened(self) -> _OpenedFiles:
        """The model files read, once per model: every thread's taggers share their weights."""
        opened = self._opened_files
        if opened is None:
            with self._opening:
                opened = self._opened_files
                if opened is None:
                    opened = self._opened_files = _OpenedFiles(self.data, self.first_pass)
        return opened

    @property
    def _parsed(self) -> tuple[Vocabulary, CrfsuiteModel, CrfsuiteModel | None]:
        """The model files read (cleaner.label.crf), and the vocabulary of attribute ids the passes share."""
        opened = self._opened()
        return opened.vocabulary, opened.main, opened.first

    @functools.cached_property
    def attribute_ids(self) -> AttributeIds:
        """Readable attribute -> the id this model's taggers score it by (a codec for the extractor)."""
        ids = AttributeIds(self._parsed[0], self.encoded)
        ids.idclass_tokens = self.idclass_tokens
        return ids

    @functools.cached_property
    def convention_ids(self) -> ConjoinedIds:
        """A convention-aware model's `attribute_ids` with a pair id for each attribute its conventions
        conjoin (cleaner.label.crf.ConjoinedIds): what `features` names such a model's attributes with."""
        conventions = self.conventions
        if conventions is None:
            raise ModelError(f"model {self.hash} was not trained with annotation conventions")
        copies = tuple(map(conventions.copy_prefix, conventions.names))
        ids = ConjoinedIds(self._parsed[0], self.encoded, copies, conventions.attributes)
        ids.idclass_tokens = self.idclass_tokens
        return ids

    @functools.cached_property
    def idclass_tokens(self) -> frozenset[str] | None:
        """The id/class tokens some attribute of this model names (its sidecar's `idclass_tokens`, written by
        training: cleaner.learn.train.known_idclass_tokens); the features name every other token as unknown without
        computing its codes (cleaner.page.feature_names.PrefixCache). None for a model saved without them: every
        token is looked up."""
        tokens = self.meta.get("idclass_tokens")  # (joined by spaces: cleaner.learn.train.with_idclass_tokens)
        return None if tokens is None else frozenset(tokens.split())

    def naming_codec(self) -> AttributeIds | None:
        """What `features` names this model's attributes with: `attribute_ids`, `convention_ids`, or None (readable
        rows, for conventions that conjoin a neighbour's attributes)."""
        if self.conventions is None:
            return self.attribute_ids
        return self.convention_ids if self.conventions.conjoins_own_only else None

    def __getstate__(self) -> dict[str, Any]:
        """What pickles (a broadcast): the model's bytes and sidecar; each process opens its own taggers."""
        return {"data": self.data, "meta": self.meta, "markers": self.markers, "first_pass": self.first_pass}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def tagger(self) -> ScoringTagger:
        """This thread's tagger of the (second-pass) block CRF."""
        return self._opened().main_taggers.tagger()

    def open(self) -> CrfModel:
        """Open every CRFsuite model it holds now (once per process), not on the first page."""
        self.tagger()
        _ = self.typer  # (a cached property: reading it opens the typer)
        if self.first_pass:
            self.first_tagger()
        return self

    def first_tagger(self) -> ScoringTagger:
        """This thread's tagger of the first pass of a stacked model (cleaner.label.stacking)."""
        taggers = self._opened().first_taggers
        if taggers is None:
            raise ModelError(f"model {self.hash} has no first pass: it is not stacked")
        return taggers.tagger()

    @functools.cached_property
    def _both_states(self) -> np.ndarray:
        """A stacked model's first-pass and second-pass state weights side by side, (attributes,
        first labels + labels): both passes' scores of the same rows in one gather."""
        return read_only(np.ascontiguousarray(np.hstack([self.first_tagger().state, self.tagger().state])))

    def _first_pass_view(self, rows, word_counts, decision, own_counts=None, scores=None) -> list[list] | np.ndarray:
        """Per block, the attribute ids of the first pass's view of the page (cleaner.label.stacking); `rows`
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
        `convention` is for convention-aware models (`cleaner.label.convention`); None = the model's default.
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
        return labels, tagger.label_marginals(labels)

    def label(
        self, features, word_counts: list[int], settings: DecisionSettings, *, convention: str | None = None,
        layout=None, texts: list[str] | None = None, marginals: bool = False,
        timings: dict[str, float] | None = None, inside_main: list[bool] | None = None,
        fill_to_end: bool = False,
    ) -> Labelling:
        """One page's labelling, whole: Viterbi labels refined by the marginals (cleaner.label.decide), re-typed
        by the marker typer when the model has one and the page's `layout` (block i -> BlockLayout, as
        MarkerTyper.layout_of gives) and `texts` are given, the probability of each final label, how the
        labels were decided, every block's P(other), and with `marginals` every label's marginal of every
        block. Every figure is read from this thread's tagger inside the call: the result owns all it
        says, and a model can label pages in several threads at once. `inside_main` (block i lies in the page's
        main container) is given when the page's convention fills it ([decision] fill_main, cleaner.label.decide), and
        `fill_to_end` when the page's type fills it to its end ([decision] fill_main_to_end)."""
        labels, _ = self.tag(features, marginals=False, convention=convention, timings=timings,
                             word_counts=word_counts, decision=settings)
        if not labels:
            return Labelling(labels, [], "viterbi", [], [] if marginals else None)
        tagger = self.tagger()
        p_other = tagger.marginal_column(OTHER)
        rows = _MarginalRows(tagger)
        labels, how = decide(labels, rows, word_counts, settings, p_other=p_other, inside=inside_main,
                             fill_to_end=fill_to_end)
        table = [rows[i] for i in range(len(labels))] if marginals else None
        typer = self.typer
        if typer is not None and layout is not None and texts is not None:
            t = time.perf_counter()
            labels = typer.retype(labels, tagger.marginals_at, layout, texts, word_counts)
            if timings is not None:
                timings["markers"] = (time.perf_counter() - t) * 1000
        # Each block's marginal of its final label (a re-typed block's of its new one), read from the marginals'
        # array in one call: the same floats as marginal(y, i) a block.
        return Labelling(labels, tagger.label_marginals(labels), how, p_other, table)

    # -- files ---------------------------------------------------------------------------

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = dict(self.meta, model_hash=self.hash)
        atomic_write(path, self.data)
        for key, suffix, attr, _ in COMPANIONS:
            data = getattr(self, attr)
            if data and meta.get(key):
                atomic_write(companion_path(path, suffix), data)
                meta[key] = dict(meta[key], sha256=hashlib.sha256(data).hexdigest())
            else:
                meta.pop(key, None)
        atomic_write(sidecar_path(path), (json.dumps(meta, indent=2, sort_keys=True) + "\n").encode())
        return path



def first_pass_view(
    tagger, rows, settings: StackingSettings, word_counts: list[int] | None = None,
    decision: DecisionSettings | None = None, codec: AttributeCodec | AttributeIds | None = None,
    scores: np.ndarray | None = None,
) -> list[list] | np.ndarray:
    """What a second pass reads of the first pass's labelling of a page (cleaner.label.stacking), the
    same in training (an inner fold's first pass) and in tagging: `tagger` (a ScoringTagger given
    attribute ids, or a CRFsuite tagger given codes) labels the `rows`, its labels are decided
    (cleaner.label.decide: this needs the blocks' `word_counts`), and the view
    is named with `codec` when given: with attribute ids (AttributeIds), as an (n, columns) array of ids.
    `scores`: the (blocks, labels) state scores of `rows` for a ScoringTagger, when computed already."""
    if scores is None:
        tagger.set(rows)
    else:
        tagger.set_scores(scores)
    labels = tagger.tag()
    p_other = (tagger.marginal_column(OTHER) if isinstance(tagger, ScoringTagger)
               else [tagger.marginal(OTHER, i) for i in range(len(labels))])
    if word_counts is None:
        raise ValueError("this stacked model's first pass is decided (cleaner.label.decide): tag() needs the "
                         "blocks' word counts")
    # (without the F1-optimal threshold, which models were not trained to read from their first pass)
    decision = replace(decision or DecisionSettings(), f1_optimal_threshold=False)
    labels, _ = decide(labels, _MarginalRows(tagger), word_counts, decision, p_other=p_other)
    if isinstance(codec, AttributeIds):
        return first_pass_ids(labels, p_other, settings, codec)
    return first_pass_attributes(labels, p_other, settings, codec)



class _MarginalRows:
    """`rows[i]` = {label: marginal} of block i of the sequence last tagged, computed on access."""

    def __init__(self, tagger):
        self.tagger = tagger
        self.names = tagger.labels()

    def __getitem__(self, i: int) -> dict[str, float]:
        if isinstance(self.tagger, ScoringTagger):  # (one call, where a CRFsuite tagger is asked label by label)
            return self.tagger.marginal_row(i)
        return {y: self.tagger.marginal(y, i) for y in self.names}



def attribute_weights(model: CrfModel) -> dict[tuple[str, str], float]:
    """State-feature weights keyed by (attribute as stored, label); see `attribute_code`."""
    return model._parsed[1].state_weights()


def attribute_code(model: CrfModel, attribute: str) -> str:
    """The name under which `attribute` is stored in this model's file."""
    return CODEC[attribute].decode() if model.encoded else attribute
