"""The front of every page's path, written once: bytes -> checked -> decoded -> parsed -> blocks.

    read_page(data, config)  ->  PageBlocks(decoded, segmentation)   or raises PageRejected(reason)

Every caller that turns page bytes into blocks goes through `read_page`: `cleaner.api.clean_html`
(and through it the CLI, the Spark worker and inspect), the seed systems' pipeline
(`cleaner.learn.systems_clean`), training and cross-validation (`cleaner.learn.train`), the seed systems'
evaluation (`cleaner.learn.systems_evaluate`) and the annotation tool without a model. A page therefore
gets the same blocks whether it is being cleaned, learnt from or scored. The stages after it are
the labeller's (the CRF: `CrfModel.label`; a seed system: its `predict`) and `cleaner.output.assemble`.

A page that cannot be read is refused with one of the reasons below (the `CleanResult` reasons of
cleaner.api), never with another exception; the refusal carries what was read before it (the
decoded page, the segmentation), so a rejected row still reports its encoding and block count.

  empty          no bytes, or only whitespace
  not_text       binary bytes labelled as HTML (more than 5 % control bytes in the first 64 KiB;
                 UTF-16/32 pages are exempt)
  too_large      more bytes than [limits] max_html_bytes
  decode_failed  the decoder failed (should not happen: decoding replaces)
  parse_error    the HTML parser or segmenter failed
  no_text        the page has no text blocks at all
  timeout        the CPU-time budget ran out between two stages
  internal_error the input is not bytes
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from .. import compiled_twin
from ..config import Config
from .decode import DecodedPage, decode_html
from .segment import Block, BlockTable, ParsedHtml, Segmentation, parse_html, segment_tree


class CpuBudget:
    """Between-stage budget checks in the calling thread's CPU time. cleaner.api also arms a CPU
    alarm on the main thread; these checks are the only limit where the alarm cannot be used (a page
    cleaned in another thread). `seconds <= 0`: no budget."""

    def __init__(self, seconds: float):
        self.deadline = time.thread_time() + seconds if seconds > 0 else None

    def expired(self) -> bool:
        return self.deadline is not None and time.thread_time() > self.deadline


NO_BUDGET = CpuBudget(0)


@dataclass
class PageBlocks:
    """A page read into text blocks: what every labeller starts from."""

    decoded: DecodedPage
    segmentation: Segmentation
    # The tree the blocks were cut from, kept only when asked for (read_page's keep_tree: a rendering that walks
    # it again, cleaner.page.structure); None otherwise, so that the tree is freed as soon as the page is cut.
    parsed: ParsedHtml | None = None

    @property
    def blocks(self) -> list[Block]:
        return self.segmentation.blocks

    @property
    def title(self) -> str:
        return self.segmentation.title


class PageRejected(Exception):
    """A page that cannot be read into blocks, with its reason (module docstring) and what was read
    before the refusal (`decoded`, `segmentation`: None when that stage was not reached)."""

    def __init__(self, reason: str, error: str | None = None, decoded: DecodedPage | None = None,
                 segmentation: Segmentation | None = None):
        super().__init__(reason if error is None else f"{reason}: {error}")
        self.reason, self.error = reason, error
        self.decoded, self.segmentation = decoded, segmentation


_CONTROL = bytes(range(0, 9)) + bytes(range(14, 27)) + bytes(range(28, 32)) + b"\x7f"


def count_bytes(data: bytes, which: bytes) -> int:
    """How many bytes of `data` are among `which` (the readable reference of compiled_guard.count_bytes)."""
    return len(data) - len(data.translate(None, which))


_compiled_guard = compiled_twin("page.compiled_guard")
_count_bytes = count_bytes if _compiled_guard is None else _compiled_guard.count_bytes


def looks_binary(data: bytes | bytearray | memoryview, http_charset: str | None) -> bool:
    """More than 5 % C0 control bytes (not tab, newlines, form feed, escape) in the first
    64 KiB: no text encoding of HTML produces that, except UTF-16/32 (exempt when a BOM or
    the HTTP charset says so, or when NULs alternate like UTF-16 ASCII)."""
    head = bytes(data[:65536])
    if head[:2] in (b"\xff\xfe", b"\xfe\xff") or head[:4] in (b"\x00\x00\xfe\xff",):
        return False
    if http_charset and ("16" in http_charset or "32" in http_charset):
        return False
    control = _count_bytes(head, _CONTROL)
    if control * 20 <= len(head):
        return False
    even, odd = head[0::2], head[1::2]  # UTF-16 without a BOM: NULs in every other byte
    return not (even.count(0) > len(even) * 0.4 or odd.count(0) > len(odd) * 0.4)


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]


def read_page(data, config: Config, *, http_charset: str | None = None, segment_config: Config | None = None,
              budget: CpuBudget = NO_BUDGET, timings: dict[str, float] | None = None,
              keep_tree: bool = False) -> PageBlocks:
    """Check, decode, parse and segment one page (module docstring); raises PageRejected only.

    `config` gives [limits] and [decode]; `segment_config` (default `config`) the [segment] settings the
    blocks are cut by: a model's own (CrfModel.feature_config) when a model labels them. `timings`, when
    given, receives each stage's milliseconds (decode, parse, segment). `keep_tree`: keep the parsed tree on
    the result (PageBlocks.parsed)."""
    timings = {} if timings is None else timings
    segment_config = segment_config or config
    if data is None or not isinstance(data, (bytes, bytearray, memoryview)):
        raise PageRejected("internal_error", f"expected bytes, got {type(data).__name__}")
    limit = int(config["limits"]["max_html_bytes"])
    if len(data) > limit:  # (the error names the limit and the setting that raises it)
        raise PageRejected("too_large", f"{len(data):,} bytes, more than the limit of {limit:,} "
                           "([limits] max_html_bytes; raise it with --config)")
    if not bytes(data[:4096]).strip() and not bytes(data).strip():
        raise PageRejected("empty")
    if looks_binary(data, http_charset):
        raise PageRejected("not_text")

    t = time.perf_counter()
    try:
        decoded = decode_html(bytes(data), http_charset=http_charset, config=config)
    except Exception as exc:
        raise PageRejected("decode_failed", _error(exc)) from exc
    timings["decode"] = (time.perf_counter() - t) * 1000
    if budget.expired():
        raise PageRejected("timeout", decoded=decoded)

    t = time.perf_counter()
    try:
        parsed = parse_html(decoded.text_if_built, segment_config, decoded.utf8)
        timings["parse"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        seg = segment_tree(parsed, segment_config)
    except Exception as exc:
        raise PageRejected("parse_error", _error(exc), decoded=decoded) from exc
    timings["segment"] = (time.perf_counter() - t) * 1000
    if not len(seg.table):
        raise PageRejected("no_text", decoded=decoded, segmentation=seg)
    if budget.expired():
        raise PageRejected("timeout", decoded=decoded, segmentation=seg)
    return PageBlocks(decoded, seg, parsed if keep_tree else None)


def read_page_to_score(data: bytes, config: Config) -> PageBlocks:
    """`read_page` for training and scoring, where every page counts: a page the cleaner refuses is
    taken as what was read of it before the refusal (usually no blocks at all), so it is scored as an
    empty output and dropped from training with the pages whose gold does not align."""
    try:
        return read_page(data, config)
    except PageRejected as rejected:
        decoded = rejected.decoded or DecodedPage("", "utf-8", "default", 0, None)
        seg = rejected.segmentation or Segmentation(table=BlockTable(), n_nodes=0, truncated=False, max_depth=0)
        return PageBlocks(decoded, seg)
