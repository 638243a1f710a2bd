"""The output record of the WARC cleaning job, defined once (pyarrow; no Spark here).

`SCHEMA` is the one definition: the Spark job derives its Spark schema from it, the
Parquet files it writes carry it, and `schemas/cleaned_record.json` is exported from it
by `scripts/export_schema.py` (a test fails when the two differ).

`build_row(record, result, ...)` turns a `cleaner.warc.HtmlRecord` and the
`cleaner.api.CleanResult` of its payload into one row (a plain dict in schema order):
pure Python, so it is tested without Spark.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa

from ..labels import LABELS
from .corpus import CorpusColumns, default_corpus_columns

# 2: expected_precision / expected_recall / expected_f1 added; 3: title added; 4: the corpus columns added (id,
# language, language_score, text_hash, minhash, minhash_bands, the quality signals; docs/corpus_columns.md) and
# plain renamed text (the name corpus tools read; both would store the largest column twice: +38 % Parquet bytes);
# 5: the page's metadata (published, author, site_name, canonical_url, description, page_type; docs/metadata.md)
# added, and title became the metadata's title (JSON-LD headline > og:title > DC.title > <title>), null when none;
# 6: markdown added (the kept text as Markdown, null unless [corpus] markdown = true; cleaner/output/markdown.py)
SCHEMA_VERSION = "6"

# Columns the job may partition its output directory by (low cardinality only).
PARTITION_COLUMNS = ("crawl", "fetch_month", "fetch_day", "status")


def _f(name: str, type_: pa.DataType, doc: str, nullable: bool = True) -> pa.Field:
    return pa.field(name, type_, nullable=nullable, metadata={"doc": doc})


LABEL_COUNT = pa.struct([
    _f("blocks", pa.int32(), "blocks given this label", nullable=False),
    _f("words", pa.int32(), "words in those blocks", nullable=False),
    _f("chars", pa.int32(), "characters in those blocks", nullable=False),
])
LABEL_STATS = pa.struct([_f(label, LABEL_COUNT, f"blocks labelled {label}", nullable=False)
                         for label in LABELS])

SCHEMA = pa.schema([
    # --- the names corpus tools read (datasets, datatrove): id and text -------------------
    _f("id", pa.string(), "the document's id: its WARC-Record-ID, as record_id (the name Hugging Face datasets and "
       "datatrove read)", nullable=False),
    # --- where the record came from -------------------------------------------------------
    _f("record_id", pa.string(), "WARC-Record-ID (or '<file>:<offset>' for ARC records)",
       nullable=False),
    _f("warc_file", pa.string(), "the WARC/ARC file as the job read it (path or URI)",
       nullable=False),
    _f("warc_offset", pa.int64(), "byte offset of the record in the (compressed) file",
       nullable=False),
    _f("warc_record_type", pa.string(), "'response' or 'resource'", nullable=False),
    _f("warc_date", pa.string(), "WARC-Date as written in the record"),
    _f("fetch_time", pa.timestamp("us", tz="UTC"), "WARC-Date parsed (UTC)"),
    _f("fetch_day", pa.string(), "YYYY-MM-DD of fetch_time (partition column)"),
    _f("fetch_month", pa.string(), "YYYY-MM of fetch_time (partition column)"),
    _f("crawl", pa.string(), "crawl name (from --crawl or the file path; partition column)",
       nullable=False),
    _f("url", pa.string(), "WARC-Target-URI", nullable=False),
    _f("host", pa.string(), "host of the URL, lowercased (no port)"),
    _f("http_status", pa.int32(), "HTTP status code (null for resource records)"),
    _f("content_type", pa.string(), "MIME type of the payload, lowercased ('' when missing)",
       nullable=False),
    _f("http_charset", pa.string(), "charset parameter of the HTTP Content-Type"),
    _f("payload_bytes", pa.int64(), "payload size after de-chunking and content decoding",
       nullable=False),
    _f("payload_truncated", pa.bool_(), "the payload was cut at the reader's size cap",
       nullable=False),
    _f("reader_notes", pa.list_(pa.string()), "WARC reader notes (dechunked, sniffed-html, ...)",
       nullable=False),
    # --- decoding -------------------------------------------------------------------------
    _f("encoding", pa.string(), "charset the page was decoded with"),
    _f("encoding_source", pa.string(), "how the charset was decided (bom, http, meta, ...)"),
    _f("replacements", pa.int32(), "bytes that could not be decoded (replaced)", nullable=False),
    _f("sanitized_chars", pa.int32(), "characters Arrow could not store, replaced by U+FFFD",
       nullable=False),
    # --- outcome --------------------------------------------------------------------------
    _f("status", pa.string(), "'cleaned' or 'rejected'", nullable=False),
    _f("reason", pa.string(), "rejection reason (empty, too_large, no_text, no_content, ...)"),
    _f("error", pa.string(), "exception text for internal errors"),
    # --- what the page says of itself (cleaner/page/metadata.py, docs/metadata.md); null when it does not -------
    _f("title", pa.string(), "the page's title: JSON-LD headline (or name) > og:title > DC.title > the head's "
       "<title>, whitespace normalised (until schema 4 the <title> alone, '' when none)"),
    _f("published", pa.string(), "publication day, ISO 8601 'YYYY-MM-DD' as the page writes it: JSON-LD "
       "datePublished > article:published_time > DC.date / dcterms.issued > <meta name=date|pubdate|...>"),
    _f("author", pa.string(), "author names joined by '; ': JSON-LD author > article:author > DC.creator > "
       "<meta name=author> (URLs left out)"),
    _f("site_name", pa.string(), "JSON-LD publisher.name > og:site_name > JSON-LD WebSite name > DC.publisher > "
       "application-name"),
    _f("canonical_url", pa.string(), "<link rel=canonical> > og:url > JSON-LD url (absolute http(s) URLs only)"),
    _f("description", pa.string(), "JSON-LD description > og:description > DC.description > "
       "<meta name=description>"),
    _f("page_type", pa.string(), "the page's type as its markup declares it (JSON-LD, microdata, og:type, then "
       "markup cues; cleaner/page/page_type.py): article, forum, product, listing or docs; null when unknown"),
    _f("cleaneval", pa.string(), "CleanEval text: each segment starts a line with <h>/<p>/<l>; a line "
       "break the page makes inside a segment (<br>, a block element's edge) goes on unmarked", nullable=False),
    _f("text", pa.string(), "the same segments without markers, the text as a browser shows it: the clean plain text "
       "as `cleaner clean --format txt` writes it ('' for a rejected page), the column corpus tools read (named "
       "plain until schema 3)", nullable=False),
    _f("markdown", pa.string(), "the kept text as Markdown (cleaner/output/markdown.py): # headings, - and 1. lists, "
       "GFM pipe tables, fenced code blocks as the page shows them, `inline code`, > quotes, formulas as $TeX$; null "
       "unless the job was run with [corpus] markdown = true, and for a rejected page (since schema 6)"),
    _f("n_blocks", pa.int32(), "text blocks found in the page", nullable=False),
    _f("blocks_truncated", pa.bool_(), "more than [limits] max_blocks blocks: the rest ignored",
       nullable=False),
    _f("label_stats", LABEL_STATS, "per label: blocks, words, chars (null when not labelled)"),
    _f("n_segments", pa.int32(), "segments in the CleanEval text", nullable=False),
    _f("words_total", pa.int32(), "words in all blocks", nullable=False),
    _f("words_kept", pa.int32(), "words in kept (non-boilerplate) blocks", nullable=False),
    _f("kept_word_share", pa.float64(), "words_kept / words_total (null when not labelled)"),
    _f("mean_confidence", pa.float64(), "mean marginal probability of the chosen labels"),
    _f("expected_precision", pa.float64(), "word precision the CRF expects of this page's output, from its "
       "blocks' P(content) (null for labellers without probabilities)"),
    _f("expected_recall", pa.float64(), "word recall the CRF expects of this page's output (likewise)"),
    _f("expected_f1", pa.float64(), "word F1 the CRF expects of this page's output: ranks pages by their real "
       "F1, a filter for pages the cleaner is unsure of (docs/confidence.md)"),
    # --- corpus columns of the text (cleaner/output/corpus.py, docs/corpus_columns.md) ------------
    _f("language", pa.string(), "ISO 639-1 code of the text's language (CLD2), or 'und': fewer than [corpus] "
       "langid_min_letters letters, mixed (top language under langid_min_share of it), unreliable, rejected",
       nullable=False),
    _f("language_score", pa.float64(), "share of the text CLD2 gives to its top language, 0-1 (0 for a short "
       "or empty text)", nullable=False),
    _f("text_hash", pa.int64(), "xxh3_64 over the xxh3_64 hashes of the text's normalised words (NFKC, "
       "casefolded, punctuation dropped) as signed int64: exact duplicates share it; null for a text without words"),
    _f("minhash", pa.list_(pa.int64()), "MinHash signature of the text's word shingles ([corpus] "
       "minhash_permutations values in [0, 2^32)): the share of equal positions estimates Jaccard similarity; "
       "null unless [corpus] minhash_signature = true, and for a text without words"),
    _f("minhash_bands", pa.list_(pa.int64()), "LSH keys of the signature's [corpus] minhash_bands bands "
       "(band index included): near-duplicate candidates share one; null for a text without words"),
    _f("text_chars", pa.int32(), "characters of text", nullable=False),
    _f("text_words", pa.int32(), "whitespace-separated words of text", nullable=False),
    _f("text_lines", pa.int32(), "non-empty lines of text", nullable=False),
    _f("mean_word_length", pa.float64(), "mean characters per word (Gopher: 3-10)", nullable=False),
    _f("alpha_word_share", pa.float64(), "share of words with an alphabetic character (Gopher: >= 0.8)",
       nullable=False),
    _f("end_punct_line_share", pa.float64(), "share of lines ending in terminal punctuation (C4, FineWeb)",
       nullable=False),
    _f("short_line_share", pa.float64(), "share of lines of at most 30 characters (FineWeb: <= 0.67)",
       nullable=False),
    _f("bullet_line_share", pa.float64(), "share of lines starting with a bullet (Gopher: <= 0.9)",
       nullable=False),
    _f("ellipsis_line_share", pa.float64(), "share of lines ending with an ellipsis (Gopher: <= 0.3)",
       nullable=False),
    _f("symbol_word_ratio", pa.float64(), "('#' + ellipses) per word (Gopher: <= 0.1)", nullable=False),
    _f("dup_line_share", pa.float64(), "share of lines repeating an earlier line (Gopher: <= 0.3)",
       nullable=False),
    _f("dup_line_char_share", pa.float64(), "characters in repeated lines / characters in lines (Gopher: <= 0.2)",
       nullable=False),
    _f("has_curly_bracket", pa.bool_(), "the text holds '{' (C4 drops such pages: code, templates)",
       nullable=False),
    _f("has_lorem_ipsum", pa.bool_(), "the text holds 'lorem ipsum' (C4 drops placeholder text)", nullable=False),
    # --- provenance -----------------------------------------------------------------------
    _f("model_hash", pa.string(), "hash of the CRF model used"),
    _f("feature_version", pa.string(), "feature extractor version of the model"),
    _f("processing_ms", pa.float64(), "wall time of clean_html on this record, milliseconds",
       nullable=False),
], metadata={"schema": "webcleaner.cleaned_record", "version": SCHEMA_VERSION})

COLUMNS = tuple(SCHEMA.names)


# ------------------------------------------------------------------------------------------
# Rows
# ------------------------------------------------------------------------------------------

_WARC_DATE_RX = re.compile(r"^(\d{4})-?(\d{2})-?(\d{2})(?:[T ]?(\d{2}):?(\d{2})(?::?(\d{2}))?"
                           r"(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$")
_ARC_DATE_RX = re.compile(r"^(\d{4})(\d{2})(\d{2})(\d{2})?(\d{2})?(\d{2})?$")


def parse_warc_date(value: str | None) -> datetime | None:
    """WARC-Date (ISO 8601, W3C profile) or a 14-digit ARC date -> aware UTC datetime."""
    if not value:
        return None
    value = value.strip()
    m = _ARC_DATE_RX.match(value)
    try:
        if m:
            year, month, day, hour, minute, second = (int(g) if g else 0 for g in m.groups())
            return datetime(year, month, day, hour, minute, second, tzinfo=UTC)
        m = _WARC_DATE_RX.match(value)
        if not m:
            return None
        y, mo, d, h, mi, s, frac, tz = m.groups()
        dt = datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0),
                      int((frac or "0").ljust(6, "0")[:6]), tzinfo=UTC)
        if tz and tz != "Z":
            sign = 1 if tz[0] == "+" else -1
            hh, mm = int(tz[1:3]), int(tz[-2:])
            dt = dt - sign * timedelta(hours=hh, minutes=mm)
        return dt
    except ValueError:
        return None


def url_host(url: str | None) -> str | None:
    """Lowercased host of a URL, without port or credentials; None when there is none."""
    if not url:
        return None
    try:
        host = urllib.parse.urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host.rstrip(".") or None if host else None


def _label_stats(stats) -> dict | None:
    if stats is None:
        return None
    out = {}
    for label in LABELS:
        c = stats.per_label.get(label)
        out[label] = {"blocks": int(c.blocks), "words": int(c.words), "chars": int(c.chars)} \
            if c is not None else {"blocks": 0, "words": 0, "chars": 0}
    return out


def build_row(record, result, *, crawl: str, processing_ms: float | None = None,
              corpus: CorpusColumns | None = None) -> dict[str, Any]:
    """One output row from an HtmlRecord and the CleanResult of its payload.

    `processing_ms` defaults to the sum of the result's stage timings; `corpus` computes the corpus columns
    (default: conf/default.toml's [corpus] settings)."""
    stats = result.stats
    fetch = parse_warc_date(record.warc_date)
    if processing_ms is None:
        processing_ms = float(sum(result.timings_ms.values()))
    text = result.plain or ""
    row = {
        "id": record.record_id,
        "record_id": record.record_id,
        "warc_file": record.warc_file,
        "warc_offset": int(record.offset),
        "warc_record_type": record.record_type,
        "warc_date": record.warc_date,
        "fetch_time": fetch,
        "fetch_day": fetch.strftime("%Y-%m-%d") if fetch else None,
        "fetch_month": fetch.strftime("%Y-%m") if fetch else None,
        "crawl": crawl,
        "url": record.url,
        "host": url_host(record.url),
        "http_status": record.http_status,
        "content_type": record.content_type or "",
        "http_charset": record.http_charset,
        "payload_bytes": len(record.payload),
        "payload_truncated": bool(record.payload_truncated),
        "reader_notes": list(record.notes or ()),
        "encoding": result.encoding,
        "encoding_source": result.encoding_source,
        "replacements": int(result.replacements or 0),
        "sanitized_chars": int(result.sanitized_chars or 0),
        "status": result.status,
        "reason": result.reason,
        "error": result.error,
        **result.metadata_columns(),
        "cleaneval": result.cleaneval or "",
        "text": text,
        "markdown": result.markdown,
        "n_blocks": int(result.n_blocks or 0),
        "blocks_truncated": bool(result.blocks_truncated),
        "label_stats": _label_stats(stats),
        "n_segments": int(stats.n_segments) if stats else 0,
        "words_total": int(stats.words_total) if stats else 0,
        "words_kept": int(stats.words_kept) if stats else 0,
        "kept_word_share": float(stats.kept_word_share) if stats else None,
        **{k: _optional_float(stats, k)
           for k in ("mean_confidence", "expected_precision", "expected_recall", "expected_f1")},
        **(corpus or default_corpus_columns()).columns(text),
        "model_hash": result.model_hash,
        "feature_version": result.feature_version,
        "processing_ms": float(processing_ms),
    }
    return row


def _optional_float(stats, name: str) -> float | None:
    """A LabelStats figure that a labeller may not give (null without probabilities or statistics)."""
    value = getattr(stats, name) if stats else None
    return None if value is None else float(value)


def row_values(row: dict[str, Any]) -> tuple:
    """The row as a tuple in schema order (what the Spark job hands to the JVM)."""
    return tuple(row[name] for name in COLUMNS)


def to_table(rows: list[dict[str, Any]]) -> pa.Table:
    """Rows -> an Arrow table with exactly SCHEMA (raises if a row does not fit)."""
    return pa.Table.from_pylist(rows, schema=SCHEMA)


# ------------------------------------------------------------------------------------------
# JSON export (schemas/cleaned_record.json)
# ------------------------------------------------------------------------------------------

def _type_json(t: pa.DataType) -> Any:
    if pa.types.is_struct(t):
        return {"type": "struct", "fields": [_field_json(t.field(i)) for i in range(t.num_fields)]}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return {"type": "list", "item": _type_json(t.value_type),
                "item_nullable": t.value_field.nullable}
    return str(t)


def _field_json(f: pa.Field) -> dict:
    out = {"name": f.name, "type": _type_json(f.type), "nullable": f.nullable}
    if f.metadata and b"doc" in f.metadata:
        out["doc"] = f.metadata[b"doc"].decode()
    return out


def schema_to_json(schema: pa.Schema = SCHEMA) -> dict:
    meta = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    return {**meta, "partition_columns": list(PARTITION_COLUMNS),
            "fields": [_field_json(f) for f in schema]}


def schema_json_text(schema: pa.Schema = SCHEMA) -> str:
    """The exact text of schemas/cleaned_record.json."""
    return json.dumps(schema_to_json(schema), indent=2, ensure_ascii=False) + "\n"
