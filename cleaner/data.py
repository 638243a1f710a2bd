"""Annotated page collections: the shared data sets, their folds, and user folders.

Three layouts are accepted wherever a DATA_DIR is given:
  * a data root holding data sets (`../shared/data`: sub-folders with html/ and gold/),
  * one data set (`html/ID.html` + `gold/ID.txt`),
  * a plain folder of `NAME.html` pages with their gold `NAME.txt` beside them (what
    `cleaner annotate` writes).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path


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
        """The page's bytes as published (a gzip-compressed `ID.html.gz`, as wcxb stores its pages, unpacked)."""
        raw = self.html_path.read_bytes()
        return gzip.decompress(raw) if self.html_path.name.endswith(".gz") else raw


def _page_id(html: Path) -> str:
    return html.name[: -len(".html.gz")] if html.name.endswith(".html.gz") else html.stem


def _dataset_pages(root: Path, name: str) -> list[Page]:
    pages = []
    files = [*(root / "html").glob("*.html"), *(root / "html").glob("*.html.gz")]
    for html in sorted(files, key=lambda p: _natural(_page_id(p))):
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
    for html in sorted(root.glob("*.html")):
        gold = html.with_suffix(".txt")
        pages.append(Page(root.name, html.stem, html, gold if gold.exists() else None))
    return pages


def load_folds(data_dir: str | Path) -> dict[str, int]:
    """`dataset/id` -> fold number from folds.tsv (empty when the file is absent)."""
    path = Path(data_dir) / "folds.tsv"
    if not path.exists():
        return {}
    with open(path, newline="") as fh:
        return {f"{r['dataset']}/{r['id']}": int(r["fold"]) for r in csv.DictReader(fh, delimiter="\t")}


def manifest_hash(pages: list[Page]) -> str:
    """A fingerprint of the training data: page keys and the bytes of pages and golds."""
    h = hashlib.sha256()
    for p in pages:
        h.update(p.key.encode())
        h.update(hashlib.sha256(p.html_path.read_bytes()).digest())
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


def page_sites(pages: list[Page]) -> dict[str, str | None]:
    """`dataset/id` -> site of every page (`page_site`)."""
    return {p.key: page_site(p.read_html()) for p in pages}


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
