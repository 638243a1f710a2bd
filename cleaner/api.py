"""`clean_html`: the bytes of one page -> a cleaned CleanEval document or a rejection.

The one entry point the CLI, the Spark job and the evaluation share. No exception escapes
it, whatever the bytes: every failure becomes a rejection with a reason, so a job over
millions of records can count outcomes instead of dying on one page.

Rejection reasons:
  empty          no bytes, or only whitespace
  not_text       binary bytes (images, PDF streams, random data) labelled as HTML: more than
                 5 % control bytes in the first 64 KiB (UTF-16/32 pages are exempt)
  too_large      more bytes than [limits] max_html_bytes
  decode_failed  the decoder failed (should not happen: decoding replaces)
  parse_error    the HTML parser or segmenter failed
  no_text        the page has no text blocks at all
  no_content     the model labelled every block as boilerplate
  timeout        the per-document CPU-time budget ([limits] time_budget_s) ran out
  internal_error any other exception (its type is kept in `error`)
"""

from __future__ import annotations

# The deadline's calls go to `signal`'s C module: its functions take and return plain ints where `signal`'s own wrap
# every handler and number in an enum (three enum conversions a page, more than a small page's labelling).
import _signal
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from .config import Config, PerConfig, load_config
from .label.convention import ConventionError
from .label.crf_model import CrfModel
from .label.decide import DecisionSettings, headline_block, settle
from .label.model import ServingModel, model_for_convention
from .output.assemble import LabelStats, assemble
from .output.markdown import MarkdownOptions, MarkdownOut, render_markdown
from .page.cues import main_container
from .page.decode import DecodedPage
from .page.metadata import FIELDS as METADATA_FIELDS
from .page.metadata import PageMetadata, read_metadata
from .page.page_marks import PageMarks
from .page.page_type import PageTyper
from .page.pipeline import CpuBudget, PageBlocks, PageRejected, read_page
from .page.segment import Block, ParsedHtml, Segmentation
from .page.structure import read_elements

REJECTION_REASONS = (
    "empty", "too_large", "not_text", "decode_failed", "parse_error", "no_text", "no_content", "timeout",
    "internal_error",
)
# first_pass: only stacked models (cleaner.label.stacking); markers: only with a typer
STAGES = ("decode", "parse", "segment", "features", "first_pass", "crf", "markers", "assemble")


@dataclass
class CleanResult:
    status: str  # "cleaned" | "rejected"
    reason: str | None = None
    error: str | None = None
    cleaneval: str = ""
    plain: str = ""
    stats: LabelStats | None = None
    n_blocks: int = 0
    encoding: str | None = None
    encoding_source: str | None = None
    replacements: int = 0
    sanitized_chars: int = 0  # characters Arrow/Parquet could not store, replaced
    # More than [limits] max_blocks blocks: only the first max_blocks were cleaned, the text of the
    # rest is missing (a "cleaned" page then is a partial one; stats.truncated says it too).
    blocks_truncated: bool = False
    nesting_capped: bool = False
    # What the pre-parse guard cut to keep the parse linear (cleaner.page.markup_guard: "nesting", "attributes",
    # "options", "formatting"); empty for an ordinary page.
    markup_capped: tuple[str, ...] = ()
    decision: str | None = None  # how labels were decided: viterbi, threshold or fallback (cleaner.label.decide)
    url: str | None = None  # from a CleanEval wrapper line when the page has one
    title: str = ""  # the page's <title> (cleaner.page.page_marks.page_title); "" without one or before segmentation
    # What the page says of itself: title, published, author, site_name, canonical_url, description, page_type
    # (cleaner.page.metadata, docs/metadata.md); None before segmentation (a page refused or not parsed).
    metadata: PageMetadata | None = None
    model_hash: str | None = None
    feature_version: str | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    # Filled only with keep_blocks=True (inspection, --format json).
    blocks: list[Block] | None = None
    labels: list[str] | None = None
    confidences: list[float] | None = None
    marginals: list[dict[str, float]] | None = None
    page: PageMarks | None = None  # what the page's markup says of it (the `cue` family's page type)
    # The kept blocks as Markdown (cleaner.output.markdown): filled only with clean_html(markdown=...) on a
    # cleaned page, None otherwise. markdown_fallback: why the page's tree could not be read again, the Markdown
    # then made from the blocks alone (tables as lines, code without its blank lines); None when it was not so.
    markdown: str | None = None
    markdown_fallback: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "cleaned"

    def metadata_columns(self) -> dict[str, str | None]:
        """The metadata by column name (title, published, ...: cleaner.page.metadata.FIELDS), as the job's row,
        `cleaner clean --format json` and the datatrove step give them; all None for a page refused before it
        was parsed."""
        return self.metadata.as_dict() if self.metadata is not None else dict.fromkeys(METADATA_FIELDS)


class _DeadlineExceeded(BaseException):
    """Raised by the alarm inside clean_html only; a BaseException so no `except Exception`
    in the stages can swallow it."""


# The budget is CPU time, not the wall clock: a page's outcome must not depend on how busy the
# machine is. On a crowded executor, or when Spark retries a task elsewhere, the same record gives
# the same row; with a wall-clock budget a page near the limit timed out under load (the torture
# catalogue's 1.2-million-element page takes 2.7 s of CPU, and timed out at 11.3 s of wall time
# beside a cross-validation run).
_TIMER, _SIGNAL = (signal.ITIMER_PROF, signal.SIGPROF) if hasattr(signal, "ITIMER_PROF") else (None, None)


DEADLINE_REPEAT = 0.05  # seconds of CPU between the deadline's signals once it has passed


@contextmanager
def _deadline(seconds: float):
    """Interrupt the enclosed code once the process has used `seconds` of CPU (SIGPROF interval
    timer, which counts user and system time).

    Only on the main thread (signals are delivered there; Spark's Python workers run
    tasks on it) and only when no other SIGPROF handler is installed (a sampling profiler's),
    so a host application's own timers are never disturbed. Elsewhere the between-stage budget
    checks still apply. A long C call (parsing) is interrupted when it returns.
    """
    usable = (
        seconds > 0
        and _TIMER is not None
        and _SIGNAL is not None  # None together with _TIMER
        and threading.current_thread() is threading.main_thread()
        and _signal.getsignal(_SIGNAL) in (signal.SIG_DFL, signal.SIG_IGN, None)
    )
    if not usable:
        yield
        return
    assert _TIMER is not None and _SIGNAL is not None  # usable says so
    armed = [True]

    def on_alarm(signum, frame):
        if armed[0]:
            raise _DeadlineExceeded()

    previous = _signal.signal(_SIGNAL, on_alarm)
    # Then again every DEADLINE_REPEAT of CPU until disarmed: a signal's exception raised while a garbage
    # collector callback or a __del__ runs is reported and dropped by Python, and a one-shot timer then let the
    # page run on unbounded (seen in CI: hypothesis's gc callback swallowed the raise of a test's page).
    _signal.setitimer(_TIMER, seconds, DEADLINE_REPEAT)
    try:
        yield
    finally:
        armed[0] = False
        _signal.setitimer(_TIMER, 0)
        _signal.signal(_SIGNAL, previous)


def _sanitize(text: str) -> tuple[str, int]:
    """Replace lone surrogates (unencodable in UTF-8, fatal for Arrow) with U+FFFD."""
    try:
        text.encode("utf-8")
        return text, 0
    except UnicodeEncodeError:
        surrogate = [0xD800 <= ord(ch) <= 0xDFFF for ch in text]
        fixed = "".join("\ufffd" if bad else ch for ch, bad in zip(text, surrogate))
        return fixed, sum(surrogate)


def clean_html(
    data: bytes,
    *,
    http_charset: str | None = None,
    model: CrfModel | ServingModel | None = None,
    config: Config | None = None,
    keep_blocks: bool = False,
    all_marginals: bool = False,
    convention: str | None = None,
    markdown: bool | MarkdownOptions = False,
) -> CleanResult:
    """Clean one page (see module docstring). Never raises for a page.

    `convention`: what to keep (docs/conventions.md): "main" (the main content: on an article page the article
    only), "cleaneval" or "dragnet"; None: the config's [model] convention (main). Without `model`, the
    convention also picks the model, the packaged one [model.by_convention] names for it (cleaneval-2012 for
    cleaneval and dragnet), or for a page in HTML5 markup the one [model.html5_by_convention] names (the default
    for cleaneval); a `model` given cleans by it if it is convention-aware. A convention the model does not know,
    or any convention for a model given that was trained without conventions, raises ConventionError at once: a
    wrong argument, not a page's failure, so it is not turned into a rejection of every page. `model` may also be
    the ServingModel that cleaner.label.model.model_for_convention resolved once for many pages (what a batch
    caller hands over): it cleans by its own convention.

    `markdown`: also render the kept blocks as Markdown into `CleanResult.markdown` (cleaner.output.markdown;
    True, or MarkdownOptions(links=..., images=..., emphasis=...)); the text and the labels are the same either way."""
    if isinstance(model, ServingModel):
        if convention and convention != model.chosen:
            raise ConventionError(f"the model handed over cleans by convention {model.chosen!r}, not {convention!r}: "
                                  "resolve it for that convention (model_for_convention)")
        serving: ServingModel | None = model
    else:
        serving = model_for_convention(config or load_config(), model, convention) if convention else None
    try:
        config = config or load_config()
        if serving is None:
            assert not isinstance(model, ServingModel)
            serving = model_for_convention(config, model)
        serving = serving.for_page(data)  # (the HTML5 pages' model, where the convention has one)
        budget = float(config["limits"]["time_budget_s"])
        try:
            with _deadline(budget):
                options = (markdown if isinstance(markdown, MarkdownOptions)
                           else MarkdownOptions() if markdown else None)
                return _clean(data, http_charset, serving.model, config, keep_blocks, all_marginals,
                              serving.convention, options)
        except _DeadlineExceeded:
            return CleanResult("rejected", "timeout", error=f"time budget of {budget:g} s exceeded",
                               model_hash=serving.model.hash, feature_version=serving.model.feature_version)
    except MemoryError:
        return CleanResult("rejected", "internal_error", error="MemoryError")
    except Exception as exc:  # the contract: no exception escapes
        return CleanResult("rejected", "internal_error", error=f"{type(exc).__name__}: {exc}"[:500])


def read_into(result: CleanResult, data, http_charset, config: Config, segment_config: Config,
              budget: CpuBudget, keep_tree: bool = False) -> PageBlocks | None:
    """`cleaner.page.pipeline.read_page` for a `CleanResult`: the page's blocks, or None with the result
    rejected for the reason read_page gave. Either way the result gets what was read (encoding,
    URL of a CleanEval wrapper, block count, title, truncation) and the stages' timings. Shared by
    clean_html and the seed systems' pipeline (cleaner.learn.systems_clean)."""
    try:
        read = read_page(data, config, http_charset=http_charset, segment_config=segment_config,
                         budget=budget, timings=result.timings_ms, keep_tree=keep_tree)
    except PageRejected as rejected:
        result.reason, result.error = rejected.reason, rejected.error
        _record_read(result, rejected.decoded, rejected.segmentation, config)
        return None
    _record_read(result, read.decoded, read.segmentation, config)
    return read


# Built once per config: a run has one, and building the typer's tables or reading the decision's settings per
# page would cost more than a small page's labelling.
page_typer: PerConfig[PageTyper] = PerConfig(PageTyper)  # the `cue` family's page typer (cleaner.page.page_type)
decision_settings: PerConfig[DecisionSettings] = PerConfig(DecisionSettings.from_config)


def _record_read(result: CleanResult, decoded: DecodedPage | None, seg: Segmentation | None,
                 config: Config | None = None) -> None:
    if decoded is not None:
        result.encoding, result.encoding_source, result.replacements = (decoded.encoding, decoded.source,
                                                                        decoded.replacements)
        if decoded.wrapper:
            result.url = decoded.wrapper.get("id")
    if seg is not None:
        result.n_blocks = len(seg.table)
        result.title, result.sanitized_chars = _sanitize(seg.title)
        result.blocks_truncated, result.nesting_capped = seg.truncated, seg.nesting_capped
        result.markup_capped = seg.markup_capped
        try:
            kind = page_typer(config).of(seg.page) if config is not None else None
            result.metadata = _sanitized_metadata(read_metadata(seg.page, seg.title, kind))
        except Exception:  # what a page says of itself never costs its text: its metadata is then all null
            result.metadata = PageMetadata()


def _sanitized_metadata(metadata: PageMetadata) -> PageMetadata:
    """The metadata with lone surrogates replaced, as the text is (Arrow refuses them)."""
    for name, value in metadata.as_dict().items():
        if value is not None:
            setattr(metadata, name, _sanitize(value)[0])
    return metadata


def _clean(data, http_charset, model: CrfModel, config: Config, keep_blocks, all_marginals,
           convention: str | None, markdown: MarkdownOptions | None = None) -> CleanResult:
    """clean_html for the model and the convention it tags with (model_for_convention resolved them)."""
    result = CleanResult("rejected", model_hash=model.hash, feature_version=model.feature_version)
    timings = result.timings_ms
    budget = CpuBudget(float(config["limits"]["time_budget_s"]))
    segment_config = model.feature_config(config)
    read = read_into(result, data, http_charset, config, segment_config, budget, keep_tree=markdown is not None)
    if read is None:
        return result
    seg = read.segmentation

    t = time.perf_counter()
    blocks = seg.table
    counts = model.extractor().counts(blocks)
    feats = model.features(blocks, counts, seg.page)
    timings["features"] = (time.perf_counter() - t) * 1000
    if budget.expired():
        result.reason = "timeout"
        return result

    t = time.perf_counter()
    words = counts.words
    typer = model.typer
    decision = decision_settings(config)
    inside = (main_container(blocks, counts, seg.page, model.extractor().cues, decision.fill_main_skip,
                             decision.fill_main_heaviest)
              if decision.fills_main(convention) else None)
    texts = blocks.text
    labelling = model.label(feats, words, decision, convention=convention,
                            layout=typer.layout_of(blocks) if typer else None,
                            texts=texts if typer else None,
                            marginals=all_marginals, timings=timings, inside_main=inside,
                            fill_to_end=model.extractor().cues.page_typer.of(seg.page) in decision.fill_main_to_end)
    labels, conf, result.decision = labelling.labels, labelling.probabilities, labelling.how
    labels = settle(labels, decision, convention, texts, blocks.gap, words, lambda: headline_block(blocks, seg.title))
    timings["crf"] = ((time.perf_counter() - t) * 1000 - timings.get("first_pass", 0.0)
                      - timings.get("markers", 0.0))
    if keep_blocks:
        result.blocks, result.labels, result.confidences = seg.blocks, labels, conf
        result.marginals = labelling.marginals
        result.page = seg.page
    finish(result, blocks, labels, conf, words, labelling.p_content)
    if markdown is not None and result.ok:
        t = time.perf_counter()
        try:
            out = markdown_of(seg, labels, read.parsed, read.decoded.text, segment_config, markdown)
            result.markdown, _ = _sanitize(out.text)
            result.markdown_fallback = out.fallback
        except _DeadlineExceeded:
            raise
        except Exception as exc:  # the Markdown never costs a page its text: it is then None, and says why
            result.markdown_fallback = f"error: {type(exc).__name__}: {exc}"[:500]
        timings["markdown"] = (time.perf_counter() - t) * 1000
    return result


def markdown_of(seg: Segmentation, labels: list[str], parsed: ParsedHtml | None, html: str, segment_config: Config,
                options: MarkdownOptions) -> MarkdownOut:
    """The kept blocks of a labelled page as Markdown (cleaner.output.markdown), the page's tree (`parsed`, the
    one the blocks were cut from) read again only where a kept block needs it (cleaner.page.structure)."""
    drop = frozenset(segment_config["segment"]["drop_tags"])

    def read_tree(targets: set[int], alone: set[int]):
        formulas = "MathJax" in html or "katex-html" in html  # (a drawn copy's content is not numbered)
        return read_elements(parsed, seg.page, targets, drop, formulas, alone) if parsed is not None else None

    return render_markdown(seg.blocks, labels, seg.page.element_parent, read_tree if parsed is not None else None,
                           options)


def finish(result: CleanResult, blocks, labels: list[str], confidences=None, word_counts=None,
           p_content=None) -> CleanResult:
    """Assemble labelled blocks into `result`: cleaned, or rejected `no_content` when no
    block was kept. Shared by the CRF and the seed systems (`cleaner.learn.systems_clean`)."""
    t = time.perf_counter()
    out = assemble(blocks, labels, confidences, word_counts, p_content)
    result.cleaneval, sanitized = _sanitize(out.cleaneval)
    result.sanitized_chars += sanitized
    result.plain, _ = _sanitize(out.plain)
    result.stats = out.stats
    result.stats.truncated = result.blocks_truncated
    result.timings_ms["assemble"] = (time.perf_counter() - t) * 1000
    if not out.segments:
        result.reason = "no_content"
        return result
    result.status = "cleaned"
    return result
