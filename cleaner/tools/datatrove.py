"""The cleaner as a datatrove pipeline step, in place of datatrove's Trafilatura extractor.

    pip install "webcleaner[datatrove]"

    from datatrove.pipeline.writers import JsonlWriter
    from datatrove.executor import LocalPipelineExecutor
    from cleaner.tools.datatrove import WebCleanerExtractor, WebCleanerWarcReader

    if __name__ == "__main__":  # datatrove's workers import the script again
        LocalPipelineExecutor(pipeline=[
            WebCleanerWarcReader("crawl/", glob_pattern="*.warc.gz"),  # (or datatrove's WarcReader: it loses pages)
            WebCleanerExtractor(),                  # was: Trafilatura(favour_precision=True)
            JsonlWriter("cleaned/"),
        ], tasks=4).run()

A document's `text` becomes the page's clean plain text (`CleanResult.plain`: one segment a line, no
markers; `output="cleaneval"` gives the <h>/<p>/<l> text instead, `output="markdown"` the kept text as Markdown:
cleaner.output.markdown), and its metadata gains what the
job's Parquet carries about the cleaning: `cleaner_status`, `cleaner_reason` (a rejected page), the page's
metadata (`title`, `published`, `author`, `site_name`, `canonical_url`, `description`, `page_type`; None where
the page says nothing: docs/metadata.md), `expected_f1` (the word F1 the CRF expects of this page's output),
`blocks_truncated` and the model's hash.
A page the cleaner rejects, or whose text is empty, is dropped as datatrove's extractors drop them, and
counted by its reason in the step's stats (`rejected_<reason>`); datatrove's own counters (`extracted`,
`timeout`, `broken_process`, `clean_error`, `forwarded`, `dropped`) keep their meaning.

datatrove's readers hand over decoded text (WebCleanerWarcReader: the cleaner's own decoding of the record's bytes;
WarcReader: UTF-8, else the charset cchardet guesses), so the page is cleaned from that text encoded as UTF-8 with
UTF-8 as its HTTP charset, which outranks a `<meta charset>` that no longer holds.
"""

from __future__ import annotations

from datatrove.data import DocumentsPipeline
from datatrove.pipeline.extractors.base import BaseExtractor, ExtractorSandbox
from datatrove.pipeline.readers.base import BaseDiskReader
from datatrove.utils.logging import logger
from datatrove.utils.typeshelper import StatHints

from ..api import clean_html
from ..config import load_config
from ..label.model import model_for_convention
from ..output.markdown import MarkdownOptions
from ..page.decode import decode_html
from ..warc import DEFAULT_MAX_PAYLOAD_BYTES, WarcFileStats, iter_html_records

OUTPUTS = ("plain", "cleaneval", "markdown")


class WebCleanerExtractor(BaseExtractor):
    """datatrove step: each document's HTML `text` -> the cleaner's text, with its outcome in the metadata.

    Args:
        model: a packaged model's name (default, cleaneval-2012) or a model file; None: the packaged model of the
            convention ([model.by_convention]: default for main, cleaneval-2012 for cleaneval and dragnet; under
            cleaneval a page in HTML5 markup goes to the default, [model.html5_by_convention]).
        config: a config overlay (TOML file) of conf/default.toml; None: the packaged config.
        convention: what to keep (docs/conventions.md): main, cleaneval or dragnet; None: the config's [model]
            convention (main). Checked against the model on first use.
        output: "plain" (the text, no markers), "cleaneval" (with <h>/<p>/<l> segment markers) or "markdown"
            (headings, lists, tables, fenced code, formulas as TeX: cleaner.output.markdown).
        markdown_options: what output="markdown" adds, MarkdownOptions(links=..., images=..., emphasis=...)
            (cleaner clean's --links, --images, --emphasis); None: none of them.
        timeout: seconds per document, as datatrove's extractors take it (the cleaner's own CPU budget,
            [limits] time_budget_s, rejects a page as `timeout` first when it is the smaller).
    """

    name = "🧹 webcleaner"

    def __init__(self, model: str | None = None, config: str | None = None, output: str = "plain",
                 timeout: float = 5.0, convention: str | None = None,
                 markdown_options: MarkdownOptions | None = None):
        super().__init__(timeout)
        if output not in OUTPUTS:
            raise ValueError(f"output must be one of {', '.join(OUTPUTS)}, not {output!r}")
        self.model_name = model
        self.config_path = config
        self.output = output
        self.markdown_options = markdown_options
        self.convention = convention
        self._loaded = None  # (serving model, config): loaded on first use, so the step pickles small for executors
        self._warned_error = False  # a sandbox error is logged once, then only counted

    def _load(self):
        if self._loaded is None:
            config = load_config(self.config_path)
            # ConventionError: a wrong argument, said at once
            serving = model_for_convention(config, self.model_name, self.convention)
            self._loaded = (serving, serving.config_for(config))
        return self._loaded

    def clean(self, text: str) -> tuple[str, dict]:
        """(the document's new text, what to add to its metadata)."""
        serving, config = self._load()  # (the model of each page: the HTML5 pages' one, where the convention has one)
        res = clean_html(text.encode("utf-8", "surrogatepass"), http_charset="utf-8", model=serving, config=config,
                         markdown=(self.markdown_options or True) if self.output == "markdown" else False)
        meta = {"cleaner_status": res.status, "cleaner_reason": res.reason,
                **res.metadata_columns(),  # title, published, author, ... (docs/metadata.md)
                "expected_f1": res.stats.expected_f1 if res.stats else None,
                "blocks_truncated": res.blocks_truncated, "cleaner_model": res.model_hash}
        if not res.ok:
            return "", meta
        if self.output == "markdown":
            return res.markdown or "", meta
        return (res.plain if self.output == "plain" else res.cleaneval), meta

    def extract(self, text: str) -> str:
        return self.clean(text)[0]

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        """BaseExtractor.run, with the cleaner's outcome kept in each document's metadata."""
        self._load()  # in this process, before the sandbox forks its worker (its warm-up is then quick)
        with ExtractorSandbox(timeout=self.timeout, warmup_text="") as sandbox:
            for doc in data:
                self.stat_update(StatHints.total)
                with self.track_time():
                    try:
                        doc.text, meta = sandbox.process_document(doc.text, self.clean)
                        self.stat_update("extracted")
                    except TimeoutError:
                        self.stat_update("timeout")
                        continue
                    except EOFError:  # the sandbox's process died; it starts another for the next document
                        self.stat_update("broken_process")
                        continue
                    except Exception as exc:  # clean_html never raises: this is the sandbox's own trouble
                        self.stat_update("clean_error")
                        if not self._warned_error:
                            logger.warning(f"webcleaner: {type(exc).__name__}: {exc} (document {doc.id}); "
                                           "dropped, counted as clean_error; said once")
                            self._warned_error = True
                        continue
                doc.metadata.update(meta)
                if meta["cleaner_status"] != "cleaned":
                    self.stat_update(f"rejected_{meta['cleaner_reason']}")
                if doc.text:
                    self.stat_update(StatHints.forwarded)
                    self.update_doc_stats(doc)
                    yield doc
                else:
                    self.stat_update(StatHints.dropped)


class WebCleanerWarcReader(BaseDiskReader):
    """datatrove reader: the HTML records of WARC (and ARC, .warc.zst) files, read as `cleaner clean-warc` and the
    Spark job read them (cleaner.warc), each page decoded by the cleaner's own decoder (cleaner.page.decode), so that
    the step after it cleans what the job cleans. datatrove's `WarcReader` decodes pages itself and leaves some out
    without a word (bytes that are not UTF-8 where its detector says UTF-8, a page libmagic takes for plain text:
    13 of the 116 pages of the README's sample WARC).

    Every record read is accounted for in the step's stats: `records` (read), `documents` (datatrove's count of
    the HTML pages handed on), `skipped_<reason>` (what is not an HTML page: request and metadata records,
    revisits, other media types, ...; cleaner.warc's reasons), `empty_page` (an HTML record with no text at all,
    which a datatrove document cannot be; `clean-warc` rejects it as `empty`) and `warc_errors` (damage: the rest of
    the file is read after a resync, as the job does). A document's metadata holds the record's `url`, `date`
    (WARC-Date), `warc_file`, `offset`, `http_status`, `content_type` and `charset` (the one the page was decoded
    with).
    """

    name = "🕷 webcleaner WARC"
    _requires_dependencies = ["warcio"]

    def __init__(self, data_folder, paths_file=None, limit: int = -1, skip: int = 0, file_progress: bool = False,
                 doc_progress: bool = False, default_metadata: dict | None = None, recursive: bool = True,
                 glob_pattern: str | None = None, shuffle_files: bool = False,
                 max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES):
        super().__init__(data_folder, paths_file, limit, skip, file_progress, doc_progress, None, "text", "id",
                         default_metadata, recursive, glob_pattern, shuffle_files)
        self.max_payload_bytes = max_payload_bytes

    def read_file(self, filepath: str):
        stats = WarcFileStats()
        # compression=None: cleaner.warc reads gzip members (one per record, or one for the file) and zstd itself
        with self.data_folder.open(filepath, "rb", compression=None) as stream:
            for record in iter_html_records(stream, filepath, stats, self.max_payload_bytes):
                with self.track_time():
                    decoded = decode_html(record.payload, http_charset=record.http_charset)
                    document = None
                    if decoded.text.strip():
                        document = self.get_document_from_dict(
                            {"text": decoded.text, "id": record.record_id,
                             "metadata": {"url": record.url, "date": record.warc_date, "warc_file": record.warc_file,
                                          "offset": record.offset, "http_status": record.http_status,
                                          "content_type": record.content_type, "charset": decoded.encoding}},
                            filepath, record.offset)
                if document is None:
                    self.stat_update("empty_page")
                    continue
                yield document
        self.stat_update("records", value=stats.records_read)
        for reason, n in sorted(stats.skipped.items()):
            self.stat_update(f"skipped_{reason}", value=n)
        if stats.errors:
            self.stat_update("warc_errors", value=len(stats.errors))
            logger.warning(f"webcleaner WARC: {filepath}: {len(stats.errors)} damaged place(s), the rest read after "
                           f"a resync: {stats.errors[0].get('error')}")
