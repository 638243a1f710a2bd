"""Training data preparation, CRF training and cross-validation by document.

Pages are prepared once (decode -> segment -> features -> gold alignment) in a pool of
worker processes. The CRF's cross-validation (`cross_validate`) runs the loop of `cleaner.learn.cv`, which
also says which pages are trainable and which train each fold's model (the seed systems run the same loop);
its folds are trained in forked workers that inherit the prepared data instead of receiving a copy.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..config import Config, load_config
from ..gold.align import align_blocks
from ..gold.data import Page
from ..gold.gold import parse_segments
from ..gold.score import DocScore, score_document
from ..label.attribute_codes import ATTRIBUTE_ENCODING, CODEC, open_tagger, train_crf
from ..label.convention import Conventions
from ..label.crf import WindowIds
from ..label.crf_model import CrfModel, first_pass_view
from ..label.decide import DecisionSettings, headline_block, settle
from ..label.markers import (
    BlockLayout,
    MarkerSettings,
    block_attributes,
    table_marginals,
    train_typer,
    training_sequence,
)
from ..label.model import load_model
from ..label.model_files import feature_config_sections
from ..label.stacking import StackingSettings, inner_fold
from ..output.assemble import assemble
from ..page.cues import main_container
from ..page.feature_names import UNSEEN
from ..page.features import DEFAULT_FAMILIES, FEATURE_VERSION, FeatureExtractor, own_attribute_count
from ..page.pipeline import read_page_to_score
from .cv import cross_validate_folds, scored_folds


@dataclass
class PreparedDoc:
    key: str
    dataset: str
    fold: int | None
    texts: list[str]
    word_counts: list[int]
    features: list[list[str]]
    labels: list[str]
    gold: str
    coverage: float
    gold_words: int
    page_words: int
    note: str = ""
    blocks: list | None = None  # the segmenter's blocks, kept only when asked (experiments)
    layout: list[BlockLayout] | None = None  # what the marker typer reads of each block (cleaner.label.markers)
    # How the blocks are joined as shown (Block.gap) and the blocks shown otherwise than their text
    # (Block.shown, {index: text}): the assembly of the output, not the features.
    gaps: list[str] | None = None
    shown: dict[int, str] | None = None
    # The page's headline block (cleaner.label.decide.headline_block), which [decision] keep_headline keeps.
    headline: list[int] | None = None
    # Whether each block lies in the page's main container (cleaner.page.cues.main_container), which
    # [decision] fill_main fills.
    main: list[bool] | None = None
    page_type: str = ""  # what the page typer calls it (cleaner.page.page_type): [decision] fill_main_to_end
    # Every id/class token of the page's blocks (Block.idclass): what a model trained on it can know of the
    # `idclass` family (known_idclass_tokens). None: not recorded (a page prepared otherwise).
    idclass_tokens: frozenset[str] | None = None

    @property
    def n_blocks(self) -> int:
        return len(self.texts)


@dataclass
class DocResult:
    key: str
    dataset: str
    fold: int | None
    score: DocScore
    gold_labels: list[str]
    pred_labels: list[str]
    prediction: str
    coverage: float
    p_other: list[float] | None = None  # marginal P(other) per block (decision-rule studies)
    # the word F1 the model expects of its output (cleaner.output.assemble.expected_scores)
    expected_f1: float | None = None
    ms: float | None = None  # CPU ms of the whole pipeline on the page, where timed (the seed systems' table)


_PREP_STATE: dict = {}


def _prepare_one(page: Page) -> PreparedDoc:
    config: Config = _PREP_STATE["config"]
    extractor: FeatureExtractor = _PREP_STATE["extractor"]
    folds: dict = _PREP_STATE["folds"]
    decision: DecisionSettings = _PREP_STATE["decision"]  # (the fill's region is the page's: main_container)
    seg = read_page_to_score(page.read_html(), config).segmentation
    blocks = seg.table
    counts = extractor.counts(blocks)
    feats = extractor.extract(blocks, counts, page=seg.page)
    gold = page.read_gold()
    al = align_blocks(seg.blocks, gold)
    markers: MarkerSettings | None = _PREP_STATE.get("markers")
    return PreparedDoc(
        key=page.key,
        dataset=page.dataset,
        fold=folds.get(page.key),
        texts=blocks.text,
        word_counts=counts.words,
        features=feats,
        labels=al.labels,
        gold=gold,
        coverage=al.coverage,
        gold_words=al.gold_words,
        page_words=al.page_words,
        note=al.note,
        blocks=seg.blocks if _PREP_STATE.get("keep_blocks") else None,
        layout=[block_attributes(b, markers) for b in seg.blocks] if markers else None,
        gaps=blocks.gap,
        shown={i: shown for i, shown in enumerate(blocks.shown) if shown is not None},
        headline=headline_block(blocks, seg.title),
        main=main_container(blocks, counts, seg.page, extractor.cues, decision.fill_main_skip,
                            decision.fill_main_heaviest),
        page_type=extractor.cues.page_typer.of(seg.page),
        idclass_tokens=frozenset(t for tokens in blocks.idclass for t in tokens),
    )


def _intern(doc: PreparedDoc) -> PreparedDoc:
    # Attribute strings repeat across documents; interning keeps millions of copies out
    # of memory when the pool hands documents back.
    intern = sys.intern
    doc.features = [list(map(intern, row)) for row in doc.features]
    doc.labels = list(map(intern, doc.labels))
    if doc.idclass_tokens:
        doc.idclass_tokens = frozenset(map(intern, doc.idclass_tokens))
    if doc.layout:
        seen = _PREP_STATE.setdefault("layout_attrs", {})
        doc.layout = [(seen.setdefault(attrs, attrs), sig) for attrs, sig in doc.layout]
    return doc


def prepare(
    pages: list[Page],
    config: Config | None = None,
    families: tuple[str, ...] | None = None,
    folds: dict[str, int] | None = None,
    processes: int | None = None,
    progress: bool = True,
    keep_blocks: bool = False,
) -> list[PreparedDoc]:
    config = config or load_config()
    _PREP_STATE.update(
        config=config, extractor=FeatureExtractor(config, families), folds=folds or {}, keep_blocks=keep_blocks,
        markers=MarkerSettings.from_config(config), decision=DecisionSettings.from_config(config),
    )
    processes = processes or min(len(pages), os.cpu_count() or 1) or 1
    bar = tqdm(total=len(pages), desc="prepare", unit="page", disable=not progress, file=sys.stderr)
    docs: list[PreparedDoc] = []
    if processes <= 1:
        for p in pages:
            docs.append(_prepare_one(p))
            bar.update()
    else:
        with mp.get_context("fork").Pool(processes) as pool:
            for doc in pool.imap(_prepare_one, pages, chunksize=4):
                docs.append(_intern(doc))
                bar.update()
    bar.close()
    return docs


def fit(
    docs: list[PreparedDoc], config: Config, *, c1: float, c2: float, max_iterations: int,
    conventions: Conventions | None = None,
) -> bytes:
    """Train one CRF on the pages (experiments; `train_model` makes the product's model)."""
    return train_crf(_rows(docs, conventions), [d.labels for d in docs], c1=c1, c2=c2, max_iterations=max_iterations)


def _rows(docs: list[PreparedDoc], conventions: Conventions | None) -> list[list[list[str]]]:
    """The pages' attribute rows; with `conventions`, each page is given its data set's convention."""
    return [conventions.apply(d.features, conventions.of(d.dataset)) if conventions else d.features for d in docs]


def train_model(
    docs: list[PreparedDoc], config: Config, *, c1: float, c2: float, max_iterations: int,
    conventions: Conventions | None = None, meta: dict | None = None, processes: int = 1,
) -> CrfModel:
    """The block CRF for the pages (no typer: see `with_typer`). With [stacking] enabled
    (cleaner.label.stacking) it is two: a first pass trained on all pages, and the model that also
    reads a first pass's labelling, trained on each page labelled by a first pass that did not
    learn from it (the pages split in [stacking] inner_folds by a hash of their key)."""
    meta = dict(meta or tagging_meta(conventions))
    X = _rows(docs, conventions)
    y = [d.labels for d in docs]
    settings = StackingSettings.from_config(config)
    # What the first passes read: whole rows, or each block's own attributes only.
    X_first = X
    if settings is not None and not settings.first_pass_neighbours:
        X_first = [[row[:own_attribute_count(row)] for row in rows] for rows in X]
    k = settings.inner_folds if settings else 0
    fold_of = [inner_fold(d.key, k) for d in docs] if k else []
    if len(set(fold_of)) < 2:
        # Too few pages to label each out of sample (every page in one inner fold): one pass.
        k, fold_of = 0, []
    # (rows, labels, the pages it learns from (None: all), c1, c2, max_iterations): a _fit_rows call
    jobs: list[tuple[list[list[list[str]]], list[list[str]], list[int] | None, float, float, int]]
    jobs = [(X_first if k else X, y, None, c1, c2, max_iterations)]
    jobs += [(X_first, y, [i for i, f in enumerate(fold_of) if f != g], c1, c2, max_iterations) for g in range(k)]
    if processes > 1 and len(jobs) > 1 and not mp.current_process().daemon:
        _FIT_STATE["jobs"] = jobs  # forked workers inherit the features instead of a pickled copy
        with mp.get_context("fork").Pool(min(processes, len(jobs))) as pool:
            fitted = pool.map(_fit_job, range(len(jobs)))
        _FIT_STATE.clear()
    else:
        fitted = [_fit_rows(*job) for job in jobs]
    if not k:
        model = CrfModel(fitted[0], meta)
        return with_idclass_tokens(model, known_idclass_tokens(model, docs))
    assert settings is not None  # k > 0 only with [stacking] settings
    # Each page as its inner fold's first pass labels it (out of sample).
    decision = DecisionSettings.from_config(config)
    stacked: list[list[list[str]]] = [[] for _ in docs]  # each page is in one inner fold: every entry replaced
    for g in range(k):
        inner = open_tagger(fitted[1 + g])
        for i, f in enumerate(fold_of):
            if f == g:
                extra = first_pass_view(inner, CODEC.encode(X_first[i]), settings, docs[i].word_counts, decision)
                stacked[i] = [row + more for row, more in zip(X[i], extra)]
    second = train_crf(stacked, y, c1=c1, c2=c2, max_iterations=max_iterations)
    meta["stacking"] = {"settings": settings.to_meta(), "training_documents": len(docs)}
    model = CrfModel(second, meta, None, fitted[0])
    return with_idclass_tokens(model, known_idclass_tokens(model, docs))


def known_idclass_tokens(model: CrfModel, docs: list[PreparedDoc]) -> list[str] | None:
    """The id/class tokens of the pages `model` was trained on (`docs`, prepared: PreparedDoc.idclass_tokens) that it
    knows an attribute of, under any name the features give one (its block's own, a neighbour's, a convention's
    copy), sorted; None when some page's tokens were not recorded, or when the model's attributes are named
    readable (no codec). A token of no training page is in no attribute of the model (CRFsuite's vocabulary holds
    what its training rows held), so the features name every token outside this list as unknown without
    computing its codes (cleaner.page.feature_names.PrefixCache, docs/speed.md stop 69). The names are the
    features' own: the model's naming, without a list, decides which tokens it knows."""
    recorded = [d.idclass_tokens for d in docs]
    if any(t is None for t in recorded):
        return None
    bare = with_idclass_tokens(model, None)  # (its naming looks every token up)
    codec = bare.naming_codec()
    if codec is None:
        return None
    extractor = bare.extractor()
    # (a WindowIds of its own: window_ids would keep this extractor and codec for the life of the process)
    names = extractor.attribute_names(codec, WindowIds(extractor, codec)).idclass
    unknown = names[UNSEEN]
    tokens: set[str] = set().union(*(t for t in recorded if t is not None))
    return sorted(t for t in tokens if names[t] != unknown)


def with_idclass_tokens(model: CrfModel, tokens: list[str] | None) -> CrfModel:
    """`model` with `tokens` (known_idclass_tokens) as its sidecar's `idclass_tokens`, or with none (None: every token
    looked up, as by a model saved before the list existed). The sidecar holds them joined by spaces, one line of JSON:
    a token is a run of [0-9a-z] (cleaner.page.segment.idclass_tokens), never a space, and tens of thousands of them,
    one a line, buried the sidecar's figures; CrfModel.idclass_tokens reads them back."""
    meta = {k: v for k, v in model.meta.items() if k != "idclass_tokens"}
    if tokens is not None:
        meta["idclass_tokens"] = " ".join(tokens)
    return CrfModel(model.data, meta, model.markers, model.first_pass)


_FIT_STATE: dict = {}


def _fit_rows(X, y, rows, c1, c2, max_iterations) -> bytes:
    if rows is not None:
        X, y = [X[i] for i in rows], [y[i] for i in rows]
    return train_crf(X, y, c1=c1, c2=c2, max_iterations=max_iterations)


def _fit_job(j: int) -> bytes:
    return _fit_rows(*_FIT_STATE["jobs"][j])


def has_markers(gold: str) -> bool:
    """The gold marks its segments (CleanEval style), so it can teach the marker typer."""
    return any(seg.marker for seg in parse_segments(gold))


def with_typer(
    model: CrfModel, docs: list[PreparedDoc], config: Config, conventions: Conventions | None = None
) -> CrfModel:
    """`model` plus a marker typer trained on its own labelling of the `docs` whose gold has
    markers (cleaner.label.markers); `model` itself when the typer is disabled or nothing can teach it."""
    settings = MarkerSettings.from_config(config)
    if settings is None:
        return model
    decision = DecisionSettings.from_config(config)
    sequences = []
    for d in docs:
        if not d.layout or not d.texts or not has_markers(d.gold):
            continue
        convention = conventions.of(d.dataset) if conventions else None
        labelling = model.label(d.features, d.word_counts, decision, convention=convention, marginals=True)
        seq = training_sequence(labelling.labels, table_marginals(labelling.marginals or []), d.layout.__getitem__,
                                d.texts, d.word_counts, d.labels, settings)
        if seq is not None:
            sequences.append(seq)
    if not sequences:
        return model
    meta = dict(model.meta, markers={"settings": settings.to_meta(), "training_documents": len(sequences)})
    return CrfModel(model.data, meta, train_typer(sequences, settings), model.first_pass)


def tagging_meta(conventions: Conventions | None = None) -> dict:
    """What a CrfModel needs in its sidecar to tag as it was trained: the attribute encoding,
    and the conventions of a convention-aware model."""
    meta: dict[str, Any] = {"attribute_encoding": ATTRIBUTE_ENCODING}
    if conventions:
        meta["conventions"] = conventions.to_meta()
    return meta


def feature_meta(config: Config, families) -> dict:
    """What a model's sidecar says of how its pages are read: the feature families (the default ones when None) and
    the [segment]/[features] sections it was trained with, and their hash."""
    families = tuple(families or DEFAULT_FAMILIES)
    return {"families": list(families), "feature_config": feature_config_sections(config),
            "config_hash": config.section_hash(families=families)}


def model_meta(config: Config, families, *, c1, c2, max_iterations, manifest: str, n_docs: int, extra=None,
               conventions: Conventions | None = None) -> dict:
    meta = {
        "labels": list(config["model"]["labels"]),
        "feature_version": FEATURE_VERSION,
        **feature_meta(config, families),
        "training_manifest_hash": manifest,
        "training_documents": n_docs,
        "c1": c1,
        "c2": c2,
        "max_iterations": max_iterations,
        "trainer": "sklearn-crfsuite lbfgs",
        **tagging_meta(conventions),
    }
    meta.update(extra or {})
    return meta


def predict(
    model: CrfModel, doc: PreparedDoc, settings: DecisionSettings | None = None, convention: str | None = None
) -> DocResult:
    """Label a prepared page exactly as clean_html would, and score it."""
    layout = doc.layout.__getitem__ if doc.layout else None
    settings = settings or DecisionSettings()
    labelling = model.label(doc.features, doc.word_counts, settings, convention=convention,
                            layout=layout, texts=doc.texts,
                            inside_main=doc.main if settings.fills_main(convention) else None,
                            fill_to_end=doc.page_type in settings.fill_main_to_end)
    labels = settle(labelling.labels, settings, convention, doc.texts, doc.gaps, doc.word_counts,
                    lambda: doc.headline or [])
    out = assemble(doc.texts, labels, None, doc.word_counts, labelling.p_content, doc.gaps, doc.shown)
    return DocResult(
        doc.key, doc.dataset, doc.fold, score_document(out.cleaneval, doc.gold), doc.labels, labels,
        out.cleaneval, doc.coverage, labelling.p_other, out.stats.expected_f1,
    )


class FoldModelError(ValueError):
    """A fold model to rescore with (cross_validate's `rescore`) is missing, or was read otherwise than the pages."""


def cross_validate(
    docs: list[PreparedDoc],
    config: Config,
    *,
    c1: float,
    c2: float,
    max_iterations: int,
    folds: list[int] | None = None,
    processes: int = 2,
    progress: bool = True,
    conventions: Conventions | None = None,
    sites: dict[str, str | None] | None = None,
    models_dir: str | Path | None = None,
    leave_out: frozenset[str] = frozenset(),
    families: tuple[str, ...] | None = None,
    rescore: bool = False,
) -> list[DocResult]:
    """The CRF's k-fold CV by document (`cleaner.learn.cv.cross_validate_folds`, the loop the seed systems run
    too): train on the other folds' pages (`train_model`, `with_typer`), predict the held-out ones (`predict`),
    the folds in `processes` forked workers.

    With `models_dir`, each fold's model is saved there as `fold-<k>.crfsuite` (to inspect or explain
    its labelling afterwards without training it again), with the feature families the pages were prepared with
    (`families`, as given to `prepare`) and the feature config in its sidecar, so that `cleaner clean --model` and
    `cleaner inspect` read a page as the cross-validation did.

    With `sites` (page key -> site, `cleaner.gold.data.page_sites`), a fold's model is also trained
    without the pages of every site that occurs in the fold: every held-out page is then from a
    site the model never saw, as most pages of a new crawl are.

    Pages whose key is in `leave_out` train no fold's model but are held out and scored as the others (a
    learning curve: what pages added to the data bring, measured on the same held-out pages).

    With `rescore` (and `models_dir`), no model is trained: each fold's pages are scored with the model an earlier
    run saved in `models_dir`, under this `config`'s decision settings (a change of [decision] measured on the
    same folds in a minute, not a cross-validation's hour). A saved model whose sidecar names other feature
    families or another feature config than the pages were prepared with is refused: its figures
    would not be the cross-validation's (FoldModelError)."""
    settings = DecisionSettings.from_config(config)
    if rescore and not models_dir:
        raise FoldModelError("rescoring reads the fold models of an earlier run: give their directory (models_dir)")
    prepared_with = feature_meta(config, families)["config_hash"]

    saved: dict[int, CrfModel] = {}  # fold -> the model an earlier run kept (rescore), read before any fold runs
    for fold in scored_folds(docs, folds) if rescore else ():
        path = Path(models_dir or ".") / f"fold-{fold}.crfsuite"
        if not path.exists():
            raise FoldModelError(f"no saved model for fold {fold}: {path} (run the cross-validation with --fold-models "
                             "first)")
        saved[fold] = load_model(path)
        if saved[fold].meta.get("config_hash") != prepared_with:
            raise FoldModelError(f"{path} was trained on pages read with other feature families or another feature "
                             "config than these: its figures would not be the cross-validation's")

    def train(fold: int, train_docs: list[PreparedDoc]) -> CrfModel:
        if rescore:
            return saved[fold]
        model = train_model(train_docs, config, c1=c1, c2=c2, max_iterations=max_iterations, conventions=conventions)
        model = with_typer(model, train_docs, config, conventions)
        if models_dir:
            # (a copy: the fold's scoring reads the prepared pages, whatever the sidecar says)
            meta = dict(model.meta, **feature_meta(config, families))
            CrfModel(model.data, meta, model.markers, model.first_pass).save(Path(models_dir) / f"fold-{fold}.crfsuite")
        return model

    def score(model: CrfModel, doc: PreparedDoc) -> DocResult:
        # A convention-aware model is scored on each page with the convention of its set's gold.
        return predict(model, doc, settings, conventions.of(doc.dataset) if conventions else None)

    return cross_validate_folds(docs, train, score, min_alignment=float(config["train"]["min_alignment"]),
                                sites=sites, folds=folds, processes=processes, progress=progress,
                                desc=f"cv c1={c1} c2={c2}", leave_out=leave_out)
