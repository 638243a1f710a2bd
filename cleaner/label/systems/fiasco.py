"""FIASCO (Bauer et al., CleanEval 2007) on the project's blocks.

Target nodes. The page is reparsed with selectolax/Lexbor and walked exactly as
`cleaner.page.segment.segment_blocks` walks it (same dropped tags, same text nodes, img-alt and
pre-line blocks), so that every project block is tied to the DOM element holding it.
Inline elements (the config's `inline_tags`: a, b, span, img, ...) are not nodes of their
own: their text is immediate text of the nearest non-inline ancestor (FIASCO classifies
paragraph-like subtrees; taken literally, every `<b>` would be a target node). A target
node is an element whose immediate text holds at least 10 % of its subtree's text. A
block belongs to its nearest non-inline ancestor if that is a target node, else to the
nearest target node above it, else to the element itself. If the walk does not reproduce
the project's blocks (it should not happen), every block is its own node.

Features of a node, scaled to [-1, 1] (min-max on the training sample, as libSVM's
svm-scale; clipped at prediction):
  linguistic: words, characters (log), mean word length, sentences (log), mean sentence
    length, share of alphabetic / capitalised / short (<= 3 characters) words, share of
    digit and punctuation characters, ends like a sentence;
  structural: the element's tag (one-hot: p, div, td/th, li/dd/dt, h1-h6, table rows,
    body, pre/blockquote, other), depth (log), share of the node's words inside links,
    relative position in the page, share of the page's words in the node and in its
    subtree, its number of blocks (log), whether it sits in a list, a table, a form.
A node is content when most of its words are (gold-aligned) content.

RBF SVM (scikit-learn SVC) with C and gamma chosen by grid search (`C_GRID` x
`GAMMA_GRID`, 3-fold cross-validation grouped by document, accuracy) on a sample of at
most `select_nodes` training nodes; the final SVM is fitted on at most `fit_nodes`
nodes (random nodes, a fixed seed). The saved system holds the support vectors, dual
coefficients and intercept; prediction evaluates the RBF decision function with numpy.
"""

from __future__ import annotations

import re

import numpy as np
from selectolax.lexbor import LexborHTMLParser, LexborNode

from ...config import load_config
from ...labels import CONTENT_LABELS
from ...page.markup_guard import MarkupLimits, guard_markup
from ...page.text import count_words, normalise_space, words
from .base import BlockLabeller, PageInput, run_labels

C_GRID = (1.0, 10.0, 100.0)
GAMMA_GRID = (0.02, 0.1, 0.5)
TAG_GROUPS = {
    "p": 0, "div": 1, "td": 2, "th": 2, "li": 3, "dd": 3, "dt": 3,
    "h1": 4, "h2": 4, "h3": 4, "h4": 4, "h5": 4, "h6": 4,
    "table": 5, "tr": 5, "tbody": 5, "body": 6, "html": 6, "pre": 7, "blockquote": 7,
}  # fmt: skip
N_TAG_GROUPS = 9  # 8 = other
FEATURES = (
    "words", "chars", "word_len", "sentences", "sent_len", "alpha", "capital", "short", "digit", "punct",
    "sent_end", "depth", "link", "position", "page_share", "subtree_share", "blocks", "in_list", "in_table",
    "in_form", *[f"tag{k}" for k in range(N_TAG_GROUPS)],
)  # fmt: skip
_SENT_END = re.compile(r"[.!?。！？]+(?:\s|$)")
_PUNCT = re.compile(r"[^\w\s]")
_DIGIT = re.compile(r"\d")
_LIST = frozenset(("ul", "ol", "li", "dl", "dd", "dt", "menu", "dir"))
_TABLE = frozenset(("table", "td", "th", "tr"))
_FORM = frozenset(("form", "fieldset", "label", "input"))


class _Settings:
    def __init__(self, config=None):
        config = config or load_config()
        seg = config["segment"]
        self.drop = frozenset(seg["drop_tags"])
        self.alt_min = int(seg["img_alt_min_chars"])
        self.max_chars = int(seg["max_block_chars"])
        self.max_blocks = int(config["limits"]["max_blocks"])
        self.markup_limits = MarkupLimits.from_config(config)
        self.inline = frozenset(config["features"]["inline_tags"])


_SETTINGS: _Settings | None = None


def _settings() -> _Settings:
    global _SETTINGS
    if _SETTINGS is None:
        _SETTINGS = _Settings()
    return _SETTINGS


def dom_nodes(html: str, blocks) -> tuple[list[int], list[dict]]:
    """(node index of every block, node descriptions); see module docstring.

    Elements: tag, parent element, depth, own/subtree words, ancestor tag classes.
    """
    st = _settings()
    tree = LexborHTMLParser(guard_markup(html, st.markup_limits).html)
    root = tree.body or tree.root
    elements: list[dict] = [{"tag": "#root", "parent": -1, "depth": 0, "anc": frozenset()}]
    host_of_block: list[int] = []
    texts: list[str] = []
    # stack entries: (host element index, in_pre)
    stack: list[tuple[int, bool]] = [(0, False)]
    n_target = len(blocks)

    def emit(text: str) -> bool:
        if len(texts) >= st.max_blocks:
            return False
        texts.append(text[: st.max_chars])
        host_of_block.append(stack[-1][0])
        return True

    if root is not None:
        node: LexborNode | None = root
        root_id = root.mem_id
        while node is not None and len(texts) < st.max_blocks:
            tag = node.tag
            descend = False
            if tag == "-text":
                raw = node.text_content
                if raw and not raw.isspace():
                    if stack[-1][1]:
                        for line in raw.split("\n"):
                            line = normalise_space(line)
                            if line and not emit(line):
                                break
                    else:
                        emit(normalise_space(raw))
            elif tag and tag[0] != "-" and tag[0] != "!":
                if tag not in st.drop:
                    host, in_pre = stack[-1]
                    if tag not in st.inline:
                        par = elements[host]
                        elements.append({"tag": tag, "parent": host, "depth": par["depth"] + 1,
                                         "anc": par["anc"] | {tag} if tag not in par["anc"] else par["anc"]})
                        host = len(elements) - 1
                    stack.append((host, in_pre or tag == "pre"))
                    descend = True
                    if tag == "img":
                        attrs = node.attributes
                        alt = attrs.get("alt") if attrs else None
                        if alt:
                            alt = normalise_space(alt)
                            if len(alt) >= st.alt_min:
                                emit(alt)
            if descend:
                child = node.child
                if child is not None:
                    node = child
                    continue
                stack.pop()
            while node is not None:
                if node.mem_id == root_id:
                    node = None
                    break
                nxt = node.next
                if nxt is not None:
                    node = nxt
                    break
                node = node.parent
                if node is None:
                    break
                stack.pop()
                if node.mem_id == root_id:
                    node = None
    if len(texts) != n_target or any(t != b.text for t, b in zip(texts, blocks)):
        # Fallback: one node per block, described by the block's own containers.
        nodes = []
        for i, b in enumerate(blocks):
            outer = b.containers[-1] if b.containers else "body"
            tag = next((t for t in reversed(b.containers) if t not in st.inline), outer)
            nodes.append({"tag": tag, "depth": b.depth, "anc": b.ancestors, "blocks": [i], "sub_words": None})
        return list(range(len(blocks))), nodes
    # own and subtree words per element
    n_el = len(elements)
    own = np.zeros(n_el)
    for h, b in zip(host_of_block, blocks):
        own[h] += count_words(b.text)
    sub = own.copy()
    for e in range(n_el - 1, 0, -1):  # children come after their parents
        sub[elements[e]["parent"]] += sub[e]
    target = (own > 0) & (own >= 0.1 * sub)
    unit_of_el: dict[int, int] = {}

    def unit(e: int) -> int:
        u = unit_of_el.get(e)
        if u is not None:
            return u
        a = e
        while a > 0 and not target[a]:
            a = elements[a]["parent"]
        u = unit_of_el[e] = a if a > 0 and target[a] else e
        return u

    node_index: dict[int, int] = {}
    nodes = []
    out = []
    for i, h in enumerate(host_of_block):
        u = unit(h)
        k = node_index.get(u)
        if k is None:
            k = node_index[u] = len(nodes)
            el = elements[u]
            nodes.append({"tag": el["tag"], "depth": el["depth"], "anc": el["anc"], "blocks": [], "sub_words": sub[u]})
        nodes[k]["blocks"].append(i)
        out.append(k)
    return out, nodes


def node_features(blocks, nodes) -> np.ndarray:
    n_blocks = len(blocks)
    wc = [count_words(b.text) for b in blocks]
    page_words = max(1, sum(wc))
    x = np.zeros((len(nodes), len(FEATURES)))
    for k, nd in enumerate(nodes):
        idx = nd["blocks"]
        text = " ".join(blocks[i].text for i in idx)
        ws = words(text)
        nw = len(ws)
        n_chars = len(text)
        sents = len(_SENT_END.findall(text)) or (1 if nw else 0)
        link_words = sum(wc[i] for i in idx if blocks[i].in_link)
        tag = nd["tag"]
        anc = nd["anc"]
        row = x[k]
        row[0] = np.log1p(nw)
        row[1] = np.log1p(n_chars)
        row[2] = (sum(map(len, ws)) / nw) if nw else 0.0
        row[3] = np.log1p(sents)
        row[4] = nw / sents if sents else 0.0
        if nw:
            row[5] = sum(w.isalpha() for w in ws) / nw
            row[6] = sum(w[:1].isupper() for w in ws) / nw
            row[7] = sum(len(w) <= 3 for w in ws) / nw
        if n_chars:
            row[8] = len(_DIGIT.findall(text)) / n_chars
            row[9] = len(_PUNCT.findall(text)) / n_chars
        row[10] = 1.0 if _SENT_END.search(text[-3:] + " ") else 0.0
        row[11] = np.log1p(nd["depth"])
        row[12] = link_words / nw if nw else 0.0
        row[13] = idx[0] / n_blocks
        row[14] = nw / page_words
        sw = nd["sub_words"]
        row[15] = (sw if sw is not None else nw) / page_words
        row[16] = np.log1p(len(idx))
        row[17] = 1.0 if not anc.isdisjoint(_LIST) else 0.0
        row[18] = 1.0 if not anc.isdisjoint(_TABLE) else 0.0
        row[19] = 1.0 if not anc.isdisjoint(_FORM) else 0.0
        row[20 + TAG_GROUPS.get(tag, N_TAG_GROUPS - 1)] = 1.0
    return x


def rbf_decision(x: np.ndarray, sv: np.ndarray, dual: np.ndarray, intercept: float, gamma: float) -> np.ndarray:
    """sum_i dual_i * exp(-gamma * |x - sv_i|^2) + intercept (scikit-learn's binary SVC decision)."""
    if len(x) == 0:
        return np.zeros(0)
    d2 = (x * x).sum(1)[:, None] + (sv * sv).sum(1)[None, :] - 2.0 * x @ sv.T
    return np.exp(-gamma * np.maximum(d2, 0.0)) @ dual + intercept


class Fiasco(BlockLabeller):
    kind = "fiasco"

    def __init__(self, select_nodes: int = 3000, fit_nodes: int = 12000, seed: int = 0):
        self.select_nodes, self.fit_nodes, self.seed = select_nodes, fit_nodes, seed
        # Set by fit / set_state.
        self.lo: np.ndarray | None = None
        self.hi: np.ndarray | None = None
        self.sv: np.ndarray | None = None
        self.dual: np.ndarray | None = None
        self.intercept = 0.0
        self.gamma: float | None = None
        self.C: float | None = None
        self.info: dict = {}

    def _page(self, page: PageInput):
        node_of_block, nodes = dom_nodes(page.html, page.blocks)
        return node_of_block, nodes, node_features(page.blocks, nodes)

    def _scale(self, x: np.ndarray) -> np.ndarray:
        assert self.lo is not None and self.hi is not None, "fit or load the system first"
        span = np.where(self.hi > self.lo, self.hi - self.lo, 1.0)
        return np.clip(2.0 * (x - self.lo) / span - 1.0, -1.0, 1.0)

    def fit(self, pages: list[PageInput], labels: list[list[str]]) -> Fiasco:
        from sklearn.model_selection import GroupKFold
        from sklearn.svm import SVC

        xs, ys, gs = [], [], []
        for d, (page, labs) in enumerate(zip(pages, labels)):
            if not page.blocks:
                continue
            node_of_block, nodes, x = self._page(page)
            cw = np.zeros(len(nodes))
            tw = np.zeros(len(nodes))
            for i, k in enumerate(node_of_block):
                w = max(1, count_words(page.blocks[i].text))
                tw[k] += w
                cw[k] += w if labs[i] in CONTENT_LABELS else 0
            xs.append(x)
            ys.append((cw * 2 > tw).astype(int))
            gs.append(np.full(len(nodes), d))
        x, y, g = np.vstack(xs), np.concatenate(ys), np.concatenate(gs)
        rng = np.random.default_rng(self.seed)
        if len(np.unique(y)) < 2:  # one class only: a constant model
            self.lo, self.hi = x.min(axis=0), x.max(axis=0)
            self.sv, self.dual = np.zeros((1, x.shape[1])), np.zeros(1)
            self.intercept, self.C, self.gamma = (1.0 if y[0] else -1.0), None, 1.0
            self.info = {"constant": int(y[0])}
            return self
        fit_idx = np.sort(rng.permutation(len(y))[: self.fit_nodes])
        self.lo, self.hi = x[fit_idx].min(axis=0), x[fit_idx].max(axis=0)
        xz = self._scale(x)
        sel = np.sort(rng.permutation(fit_idx)[: self.select_nodes])
        acc = {}
        xs_, ys_, gs_ = xz[sel], y[sel], g[sel]
        n_groups = len(np.unique(gs_))
        for C in C_GRID if n_groups >= 2 else ():
            for gamma in GAMMA_GRID:
                correct = 0
                for tr, te in GroupKFold(n_splits=min(3, n_groups)).split(xs_, ys_, gs_):
                    if len(np.unique(ys_[tr])) < 2:
                        correct += int((ys_[te] == ys_[tr][0]).sum())
                        continue
                    clf = SVC(C=C, gamma=gamma, kernel="rbf").fit(xs_[tr], ys_[tr])
                    correct += int((clf.predict(xs_[te]) == ys_[te]).sum())
                acc[(C, gamma)] = correct / len(sel)
        if not acc:
            acc = {(C_GRID[1], GAMMA_GRID[1]): 0.0}  # too few pages to choose: the grid's middle
        self.C, self.gamma = max(acc, key=lambda k: (acc[k], -k[0], -k[1]))
        clf = SVC(C=self.C, gamma=self.gamma, kernel="rbf").fit(xz[fit_idx], y[fit_idx])
        # decision > 0 means classes_[1]; classes are (0, 1) when both occur
        sign = 1.0 if list(clf.classes_) == [0, 1] else -1.0
        self.sv = clf.support_vectors_.astype(float)
        self.dual = sign * clf.dual_coef_[0].astype(float)
        self.intercept = sign * float(clf.intercept_[0])
        grid = {f"{c},{gm}": round(a, 4) for (c, gm), a in acc.items()}
        self.info = {"C": self.C, "gamma": self.gamma, "grid_accuracy": grid,
                     "training_nodes": int(len(y)), "select_nodes": int(len(sel)), "fit_nodes": int(len(fit_idx)),
                     "support_vectors": int(len(self.sv))}
        return self

    def decision(self, x: np.ndarray) -> np.ndarray:
        assert self.sv is not None and self.dual is not None and self.gamma is not None, "fit or load the system first"
        return rbf_decision(self._scale(x), self.sv, self.dual, self.intercept, self.gamma)

    def predict(self, page: PageInput) -> list[str]:
        if not page.blocks:
            return []
        node_of_block, nodes, x = self._page(page)
        content = self.decision(x) > 0
        return run_labels([bool(content[k]) for k in node_of_block])

    def get_state(self):
        return {"C": self.C, "gamma": self.gamma, "intercept": self.intercept, "features": list(FEATURES),
                "info": self.info}, {"lo": self.lo, "hi": self.hi, "sv": self.sv, "dual": self.dual}

    def set_state(self, meta, arrays):
        if meta.get("features") != list(FEATURES):
            raise ValueError("feature list differs from this version's")
        self.C, self.gamma, self.intercept = meta["C"], float(meta["gamma"]), float(meta["intercept"])
        self.info = meta.get("info", {})
        self.lo, self.hi, self.sv, self.dual = arrays["lo"], arrays["hi"], arrays["sv"], arrays["dual"]
