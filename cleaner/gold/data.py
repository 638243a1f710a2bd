"""Annotated page collections: the shared data sets, their folds, sites and page types, and user folders.

Three layouts are accepted wherever a DATA_DIR is given:
  * a data root holding data sets (`../shared/data`: sub-folders with html/ and gold/),
  * one data set (`html/ID.html` or gzip-compressed `html/ID.html.gz`, as wcxb's, + `gold/ID.txt`),
  * a plain folder of `NAME.html` (or `NAME.html.gz`) pages with their gold `NAME.txt` beside them
    (what `cleaner annotate` writes).

Read a page's bytes with `Page.read_html()` (decompressed) and its gold with `Page.read_gold()` (in
the scorer's format: the gold of a set without markers is plain text, `GOLD_FORMATS`).
"""

from __future__ import annotations

import csv
import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..page.saved import gunzip
from .gold import as_plain_text, read_gold

_GZ = ".html.gz"

# The gold format of each shared set (the data README, "Gold files"). Only CleanEval gold marks its
# segments (<p>, <h>, <l>); the others are plain text, where a "<p>" is text (two wcxb golds quote HTML
# code) and no markup figure applies. A set not named here (a user's folder) is read as CleanEval
# format: markers where it has them, plain lines where it has none.
GOLD_FORMATS = {
    "cleaneval-dev": "cleaneval",
    "cleaneval-final": "cleaneval",
    "cleanportaleval": "cleaneval",
    "dragnet": "dragnet",  # article, a separator line, comments
    "chaos": "article",  # headline and the article's own text
    "big5-2005": "article",
    "big5-2009": "article",
    "big5-2013": "article",
    "big5-2017": "article",
    "fundus": "article",
    "wcxb": "main-content",  # what the page exists to deliver, by page type (pages.tsv)
}


def gold_format(dataset: str) -> str:
    """The gold format of a data set (GOLD_FORMATS); "cleaneval" for a set it does not name."""
    return GOLD_FORMATS.get(dataset, "cleaneval")


@dataclass(frozen=True)
class Page:
    dataset: str
    id: str
    html_path: Path
    gold_path: Path | None

    @property
    def key(self) -> str:
        return f"{self.dataset}/{self.id}"

    def read_html(self) -> bytes:
        """The page's bytes as published (a `.html.gz` file decompressed)."""
        return read_html_file(self.html_path)

    def read_gold(self) -> str:
        """The gold text as the scorer and the gold alignment read it ("" without a gold file):
        decoded (cleaner.gold.gold.read_gold), and in a set whose gold has no markers, marker-like text
        kept as text (cleaner.gold.gold.as_plain_text)."""
        if self.gold_path is None:
            return ""
        text = read_gold(self.gold_path)
        return text if gold_format(self.dataset) == "cleaneval" else as_plain_text(text)


def read_html_file(path: str | Path) -> bytes:
    """The bytes of a saved page, decompressed when its name ends in `.html.gz` (wcxb's pages; every gzip
    member: cleaner.page.saved)."""
    data = Path(path).read_bytes()
    return gunzip(data) if str(path).endswith(_GZ) else data


def _page_id(html: Path) -> str:
    """`12.html` -> `12`, `0002.html.gz` -> `0002`."""
    return html.name[: -len(_GZ)] if html.name.endswith(_GZ) else html.stem


def _html_files(folder: Path) -> list[Path]:
    return [*folder.glob("*.html"), *folder.glob("*" + _GZ)]


def _dataset_pages(root: Path, name: str) -> list[Page]:
    pages = []
    for html in sorted(_html_files(root / "html"), key=lambda p: _natural(_page_id(p))):
        gold = root / "gold" / (_page_id(html) + ".txt")
        pages.append(Page(name, _page_id(html), html, gold if gold.exists() else None))
    return pages


def _natural(s: str):
    return (0, int(s), "") if s.isdigit() else (1, 0, s)


def find_pages(data_dir: str | Path, datasets: list[str] | None = None) -> list[Page]:
    """All pages under `data_dir` (any of the three layouts), sorted deterministically."""
    root = Path(data_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"not a directory: {root}")
    if (root / "html").is_dir():
        return _dataset_pages(root, root.name)
    subsets = sorted(d for d in root.iterdir() if (d / "html").is_dir())
    if subsets:
        pages: list[Page] = []
        for d in subsets:
            if datasets is None or d.name in datasets:
                pages.extend(_dataset_pages(d, d.name))
        return pages
    pages = []
    for html in sorted(_html_files(root)):  # (by path, as before .html.gz was read)
        gold = root / (_page_id(html) + ".txt")
        pages.append(Page(root.name, _page_id(html), html, gold if gold.exists() else None))
    return pages


def load_folds(data_dir: str | Path) -> dict[str, int]:
    """`dataset/id` -> fold number from folds.tsv (empty when the file is absent)."""
    path = Path(data_dir) / "folds.tsv"
    if not path.exists():
        return {}
    with open(path, newline="") as fh:
        return {f"{r['dataset']}/{r['id']}": int(r["fold"]) for r in csv.DictReader(fh, delimiter="\t")}


def _tables(data_dir: str | Path, name: str) -> list[Path]:
    """The `name` tables that describe the pages under `data_dir`: its own, its sets' (a data root),
    and for one data set, its data root's."""
    root = Path(data_dir)
    found = [root / name, *(d / name for d in sorted(root.iterdir()) if (d / "html").is_dir())] if root.is_dir() else []
    if (root / "html").is_dir():
        found.append(root.parent / name)
    return [f for f in found if f.is_file()]


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def load_page_types(data_dir: str | Path) -> dict[str, str]:
    """`dataset/id` -> page type, from the `pages.tsv` of each set that has one (wcxb: `id`,
    `page_type` among article, forum, product, collection, listing, documentation, service)."""
    out = {}
    for path in _tables(data_dir, "pages.tsv"):
        dataset = path.parent.name
        for row in _rows(path):
            if row.get("id") and row.get("page_type"):
                out[f"{dataset}/{row['id']}"] = row["page_type"]
    return out


def load_sites(data_dir: str | Path) -> dict[str, str]:
    """`dataset/id` -> site from `sites.tsv` (the modern sets: a registered domain each). A page
    listed without a site (two chaos pages name none) is a site of its own: its key."""
    out = {}
    for path in _tables(data_dir, "sites.tsv"):
        for row in _rows(path):
            key = f"{row['dataset']}/{row['id']}"
            out[key] = (row.get("site") or "").strip().lower() or key
    return out


def manifest_hash(pages: list[Page]) -> str:
    """A fingerprint of the training data: page keys and the bytes of pages and golds."""
    h = hashlib.sha256()
    for p in pages:
        h.update(p.key.encode())
        h.update(hashlib.sha256(p.read_html()).digest())
        if p.gold_path:
            h.update(hashlib.sha256(p.gold_path.read_bytes()).digest())
    return h.hexdigest()[:16]


# -- sites ----------------------------------------------------------------------------------
# Saved pages carry no URL. The site of a page is the host its HTML declares (canonical link,
# og:url, <base>), else the host its absolute links point to most often: a heuristic, good
# enough to keep the pages of one site on one side of a train/test split.
_HOST = rb"https?://([^/\"'>\s]+)"
_DECLARED = [re.compile(p, re.I) for p in (
    rb"<link[^>]+rel=[\"']?canonical[\"']?[^>]+href=[\"']?" + _HOST,
    rb"<link[^>]+href=[\"']?" + _HOST + rb"[^>]+rel=[\"']?canonical",
    rb"property=[\"']og:url[\"'][^>]+content=[\"']?" + _HOST,
    rb"content=[\"']?" + _HOST + rb"[^>]+property=[\"']og:url",
    rb"<base[^>]+href=[\"']?" + _HOST,
)]  # fmt: skip
_LINK = re.compile(rb"href=[\"']?" + _HOST, re.I)


def _host(raw: bytes) -> str:
    h = raw.decode("latin-1").lower().split(":")[0]
    return h[4:] if h.startswith("www.") else h


def page_site(html: bytes) -> str | None:
    """The site (host without `www.`) a saved page comes from, or None when it names none."""
    head = html[:200_000]
    for rx in _DECLARED:
        m = rx.search(head)
        if m:
            return _host(m.group(1))
    hosts = Counter(_host(h) for h in _LINK.findall(head))
    return hosts.most_common(1)[0][0] if hosts else None


def without_sites_of(train: list, held_out: list, sites: dict[str, str | None] | None) -> list:
    """The items of `train` (anything with a `.key`) whose site is not the site of any item of
    `held_out`; all of `train` when `sites` is None. Items of no known site are kept."""
    if not sites:
        return list(train)
    seen = {sites.get(d.key) for d in held_out} - {None}
    return [d for d in train if sites.get(d.key) not in seen]


def page_sites(pages: list[Page], listed: dict[str, str] | None = None) -> dict[str, str | None]:
    """`dataset/id` -> site of every page: the site `listed` names (`load_sites`: sites.tsv), else the
    host its HTML names (`page_site`). A derived host that is a listed site or under one (the old
    sets' `edition.cnn.com`, where big5 and chaos list `cnn.com`) becomes that site, so that holding
    a site out holds it out of every set at once."""
    listed = listed or {}
    known = set(listed.values())
    out: dict[str, str | None] = {}
    for p in pages:
        if p.key in listed:
            out[p.key] = listed[p.key]
        else:
            out[p.key] = _under_known_site(page_site(p.read_html()), known)
    return out


def _under_known_site(host: str | None, known: set[str]) -> str | None:
    """The most specific site of `known` that is `host` or a domain above it; `host` when none is."""
    if host is None or not known:
        return host
    parts = host.split(".")
    for i in range(len(parts) - 1):
        candidate = ".".join(parts[i:])
        if candidate in known:
            return candidate
    return host


# -- a model's training pages ----------------------------------------------------------------


def training_pages(meta: dict, data_dir: str | Path) -> dict[bytes, str] | None:
    """The pages a model was trained on, as {SHA-256 of the HTML: page key}, when its sidecar's
    training manifest is that of the pages with gold in `data_dir` (the data sets its
    cross-validation names, else all): the packaged models are trained on the shared data.
    None when the manifest does not match (a model trained elsewhere: its pages are unknown)."""
    manifest = meta.get("training_manifest_hash")
    if not manifest or not Path(data_dir).is_dir():
        return None
    datasets = sorted(k for k in (meta.get("cross_validation") or {}) if k != "all") or None
    try:
        pages = [p for p in find_pages(data_dir, datasets) if p.gold_path is not None]
    except FileNotFoundError:
        return None
    if not pages or manifest_hash(pages) != manifest:
        return None
    left_out = {k for k, *_ in meta.get("left_out") or ()} | set(meta.get("left_out_empty_gold") or ())
    return {hashlib.sha256(p.read_html()).digest(): p.key for p in pages if p.key not in left_out}
