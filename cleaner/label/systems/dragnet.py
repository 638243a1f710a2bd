"""Dragnet (Peters & Lecocq, WWW 2013) on the project's blocks.

Features of a block (content vs. noise, one logistic regression):

* Kohlschütter et al. (2010) shallow text features: text density (tokens per 80-character
  line) and link density (share of words inside links), of the block itself, of the
  Kohlschütter block it belongs to (consecutive blocks not separated by a block-level tag,
  `common.unit_ids`: our blocks split at every tag, so a block alone has a link density of
  0 or 1), and of the previous and next block and Kohlschütter block; word counts (log).
* CETR (Weninger et al. 2010, `common.cetr`): tag ratio, its smoothed value, the absolute
  smoothed derivative, and the CETR k-means prediction itself.
* id/class tokens of the ancestors: binary features for the tokens with the most extreme
  content:non-content block odds on the training pages (at least `min_docs` documents;
  the `n_tokens` most content-like and the `n_tokens` most noise-like).

Features are standardised; L2 logistic regression (scikit-learn, lbfgs) with C chosen from
`C_GRID` by 3-fold cross-validation grouped by document within the training pages
(log-loss). To stay within the CPU budget, C is chosen on at most `select_blocks`
training blocks and the final model fitted on at most `fit_blocks`, sampled by document
(sizes recorded in the saved system). A block is content when P(content) >= 0.5.
"""

from __future__ import annotations

import numpy as np

from ...labels import CONTENT_LABELS
from .base import BlockLabeller, PageInput, run_labels
from .common import cetr, kohlschuetter_density, unit_ids, word_counts

C_GRID = (0.001, 0.01, 0.1, 1.0, 10.0)
NUMERIC = (
    "words", "density", "link", "unit_words", "unit_density", "unit_link",
    "prev_density", "prev_link", "next_density", "next_link",
    "prev_unit_density", "prev_unit_link", "next_unit_density", "next_unit_link",
    "tr", "tr_smooth", "dtr_smooth", "cetr_kmeans",
)  # fmt: skip


def numeric_features(blocks) -> np.ndarray:
    n = len(blocks)
    if n == 0:
        return np.zeros((0, len(NUMERIC)))
    w = word_counts(blocks)
    chars = np.fromiter((len(b.text) for b in blocks), dtype=float, count=n)
    link = np.fromiter((b.in_link for b in blocks), dtype=float, count=n)
    dens = kohlschuetter_density(w, chars)
    u = unit_ids(blocks)
    nu = int(u[-1]) + 1
    uw = np.bincount(u, w, nu)
    uc = np.bincount(u, chars + 1, nu)  # +1: the space joining blocks
    ul = np.bincount(u, w * link, nu)
    u_dens = kohlschuetter_density(uw, uc)
    u_link = ul / np.maximum(uw, 1)

    def shift(x, k, fill=0.0):
        out = np.full_like(x, fill)
        if k > 0:
            out[k:] = x[:-k]
        else:
            out[:k] = x[-k:]
        return out

    c = cetr(blocks)
    cols = {
        "words": np.log1p(w), "density": dens, "link": link,
        "unit_words": np.log1p(uw[u]), "unit_density": u_dens[u], "unit_link": u_link[u],
        "prev_density": shift(dens, 1), "prev_link": shift(link, 1),
        "next_density": shift(dens, -1), "next_link": shift(link, -1),
        "prev_unit_density": shift(u_dens, 1)[u], "prev_unit_link": shift(u_link, 1)[u],
        "next_unit_density": shift(u_dens, -1)[u], "next_unit_link": shift(u_link, -1)[u],
        "tr": c["tr"], "tr_smooth": c["tr_smooth"], "dtr_smooth": c["dtr_smooth"], "cetr_kmeans": c["kmeans"],
    }  # fmt: skip
    return np.stack([cols[k] for k in NUMERIC], axis=1)


def choose_tokens(pages, labels, min_docs: int = 10, n_tokens: int = 40) -> list[str]:
    """id/class tokens with the most extreme content:non-content odds (smoothed)."""
    pos: dict[str, int] = {}
    neg: dict[str, int] = {}
    docs: dict[str, int] = {}
    n_pos = n_neg = 0
    for page, labs in zip(pages, labels):
        seen = set()
        for b, lab in zip(page.blocks, labs):
            c = lab in CONTENT_LABELS
            n_pos += c
            n_neg += not c
            d = pos if c else neg
            for t in b.idclass:
                d[t] = d.get(t, 0) + 1
                seen.add(t)
        for t in seen:
            docs[t] = docs.get(t, 0) + 1
    cand = [t for t, k in docs.items() if k >= min_docs]
    if not cand:
        return []
    lo = {t: np.log((pos.get(t, 0) + 1) / (n_pos + 2)) - np.log((neg.get(t, 0) + 1) / (n_neg + 2)) for t in cand}
    ranked = sorted(cand, key=lambda t: (lo[t], t))
    chosen = ranked[:n_tokens] + [t for t in ranked[-n_tokens:] if lo[t] > 0]
    chosen = [t for t in dict.fromkeys(chosen) if abs(lo[t]) > 0.1]
    return sorted(chosen)


def token_features(blocks, tokens: list[str]) -> np.ndarray:
    index = {t: k for k, t in enumerate(tokens)}
    x = np.zeros((len(blocks), len(tokens)))
    for i, b in enumerate(blocks):
        for t in b.idclass:
            k = index.get(t)
            if k is not None:
                x[i, k] = 1.0
    return x


def _sample_docs(n_docs_blocks: list[int], cap: int, rng) -> np.ndarray:
    """Indices of documents, in random order, until about `cap` blocks are covered."""
    order = rng.permutation(len(n_docs_blocks))
    total = np.cumsum(np.asarray(n_docs_blocks)[order])
    k = int(np.searchsorted(total, cap)) + 1
    return np.sort(order[:k])


class Dragnet(BlockLabeller):
    kind = "dragnet"

    def __init__(self, select_blocks: int = 60_000, fit_blocks: int = 200_000, seed: int = 0):
        self.select_blocks, self.fit_blocks, self.seed = select_blocks, fit_blocks, seed
        self.tokens: list[str] = []
        # Set by fit / set_state.
        self.mean: np.ndarray | None = None
        self.scale: np.ndarray | None = None
        self.coef: np.ndarray | None = None
        self.intercept = 0.0
        self.C: float | None = None
        self.info: dict = {}

    def features(self, blocks) -> np.ndarray:
        return np.hstack([numeric_features(blocks), token_features(blocks, self.tokens)])

    def fit(self, pages: list[PageInput], labels: list[list[str]]) -> Dragnet:
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import GroupKFold

        rng = np.random.default_rng(self.seed)
        self.tokens = choose_tokens(pages, labels)
        sizes = [len(p.blocks) for p in pages]
        use = _sample_docs(sizes, self.fit_blocks, rng)
        xs, ys, gs = [], [], []
        for gi, i in enumerate(use):
            if not pages[i].blocks:
                continue
            xs.append(self.features(pages[i].blocks))
            ys.append(np.array([lab in CONTENT_LABELS for lab in labels[i]], dtype=int))
            gs.append(np.full(len(pages[i].blocks), gi))
        x, y, g = np.vstack(xs), np.concatenate(ys), np.concatenate(gs)
        self.mean = x.mean(axis=0)
        if len(np.unique(y)) < 2:  # one class only: a constant model
            self.scale = np.ones(x.shape[1])
            self.coef = np.zeros(x.shape[1])
            self.intercept = 50.0 if y[0] else -50.0
            self.info = {"C": None, "constant": int(y[0])}
            return self
        sd = x.std(axis=0)
        self.scale = np.where(sd > 0, sd, 1.0)
        xz = (x - self.mean) / self.scale
        # choose C on a document sample of at most select_blocks blocks
        sel_docs = np.unique(g)
        sel_sizes = np.bincount(g)[sel_docs]
        pick = sel_docs[_sample_docs(list(sel_sizes), self.select_blocks, rng)]
        m = np.isin(g, pick)
        xs_, ys_, gs_ = xz[m], y[m], g[m]
        losses = {}
        n_groups = len(np.unique(gs_))
        for C in C_GRID if n_groups >= 2 else ():
            loss = 0.0
            for tr, te in GroupKFold(n_splits=min(3, n_groups)).split(xs_, ys_, gs_):
                if len(np.unique(ys_[tr])) < 2:
                    loss = np.inf
                    break
                clf = LogisticRegression(C=C, max_iter=300).fit(xs_[tr], ys_[tr])
                p = np.clip(clf.predict_proba(xs_[te])[:, 1], 1e-9, 1 - 1e-9)
                loss -= float(np.sum(ys_[te] * np.log(p) + (1 - ys_[te]) * np.log(1 - p)))
            losses[C] = loss / len(ys_)
        if not losses or not np.isfinite(min(losses.values())):
            losses = {1.0: 0.0}  # too few pages to choose: the default C
        self.C = min(losses, key=lambda c: (losses[c], c))
        clf = LogisticRegression(C=self.C, max_iter=500).fit(xz, y)
        self.coef = clf.coef_[0].astype(float)
        self.intercept = float(clf.intercept_[0])
        self.info = {"C": self.C, "cv_log_loss": {str(k): round(v, 5) for k, v in losses.items()},
                     "select_blocks": int(m.sum()), "fit_blocks": int(len(y)), "fit_docs": int(len(use)),
                     "n_tokens": len(self.tokens)}
        return self

    def probabilities(self, blocks) -> np.ndarray:
        if not blocks:
            return np.zeros(0)
        z = (self.features(blocks) - self.mean) / self.scale @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))

    def predict(self, page: PageInput) -> list[str]:
        return run_labels(list(self.probabilities(page.blocks) >= 0.5))

    def get_state(self):
        return {"tokens": self.tokens, "intercept": self.intercept, "numeric": list(NUMERIC), "info": self.info}, {
            "mean": self.mean, "scale": self.scale, "coef": self.coef,
        }

    def set_state(self, meta, arrays):
        if meta.get("numeric") != list(NUMERIC):
            raise ValueError("feature list differs from this version's")
        self.tokens = list(meta["tokens"])
        self.intercept = float(meta["intercept"])
        self.info = meta.get("info", {})
        self.C = self.info.get("C")
        self.mean, self.scale, self.coef = arrays["mean"], arrays["scale"], arrays["coef"]
