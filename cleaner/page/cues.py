"""The `cue` feature family (cleaner.page.features): what today's boilerplate is called ([features.cues]).

Consent, ad, newsletter, share, caption, byline, paywall, related ... in the id/class tokens of the
ancestors (as substrings: "cookiebanner") and in the text of short blocks, in several languages; the
page's type as its markup declares it (cleaner.page.page_type), the repeated item a block sits in (cards,
list items, posts) and whether it is code. `FeatureExtractor` holds the settings (`CueSettings`) and
the names (`CueNames`) and calls the functions here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final
from urllib.parse import parse_qsl, urlsplit

# (scripts/build_native.py compiles this module with mypyc: see cleaner/page/features.py.)
from .. import compiled_twin
from ..config import Config
from .page_marks import PageMarks
from .page_type import PageTyper
from .segment import HIDDEN, BlockCounts, BlockTable
from .text import compiled_text_module

# -- cue regexps: a literal prefilter -------------------------------------------------------
# Every `cue.text` regexp is searched in every short block; most blocks match none. For each regexp the
# literal strings one of which every match must contain are derived from its parse (sre_parse), so that a
# text of ASCII characters only that contains none of them (case-folded as the regexp folds) need not be
# searched. A text that is not ASCII is compared with literals of its own (cue_prefilter_wide), each character
# as `read_wide` reads it: Unicode case folding has equivalences across the ASCII boundary (the Kelvin sign and
# "k", the long s and "s", dotted capital and dotless i and "i"), and a literal's character outside ASCII is
# compared as "any character outside ASCII".

# The characters outside ASCII that a regexp ignoring case equates with an ASCII letter (re's own equivalences: the
# only four among every code point, tests/test_compiled_text.py).
_WIDE_FOLDS: Final = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
_OUTSIDE_ASCII: Final = "\x80"  # what read_wide makes of any other character outside ASCII


def _wide_char(ch: str, fold: bool) -> str:
    if ch < "\x80":
        return ch.lower() if fold else ch
    return _WIDE_FOLDS.get(ch, _OUTSIDE_ASCII) if fold else _OUTSIDE_ASCII


def read_wide(text: str, fold: bool) -> str:
    """A text as the literals of cue_prefilter_wide are compared with it: an ASCII character as it is (lowered when
    the regexp ignores case), the four letters of _WIDE_FOLDS as their ASCII letter when it ignores case, any other
    character outside ASCII as U+0080. Where a regexp's character matches a text's, both read the same: so a text
    without any of a regexp's literals read so cannot match it."""
    return "".join([_wide_char(ch, fold) for ch in text])

def _sre_modules() -> tuple:
    """The regexp parser and its constants, by their public names (sre_parse, sre_constants: deprecated since
    3.11 in favour of re's private modules, which the project does not import; silenced here)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import sre_constants
        import sre_parse
    return sre_parse, sre_constants


def _ascii_fold_ok(ch: str, flags: int) -> int:
    """How the regexp (its `flags`) matches the literal `ch` against ASCII characters: 1 when exactly the
    ASCII characters equal to it (ignoring case under IGNORECASE) match, 0 when no ASCII character does
    (a run holding it never occurs in an ASCII text), -1 otherwise (not usable). Memoized."""
    key = (ch, flags)
    known = _ASCII_FOLD.get(key)
    if known is not None:
        return known
    result = _ascii_fold(ch, flags)
    _ASCII_FOLD[key] = result
    return result


_ASCII_FOLD: Final[dict[tuple[str, int], int]] = {}


def _ascii_fold(ch: str, flags: int) -> int:
    rx = re.compile(re.escape(ch), flags & (re.IGNORECASE | re.ASCII))
    fold = bool(flags & re.IGNORECASE)
    any_match = False
    for a in map(chr, range(128)):
        matched = rx.fullmatch(a) is not None
        expected = (a.lower() == ch.lower()) if fold else (a == ch)
        if matched != expected:
            return -1
        any_match = any_match or matched
    return 1 if any_match else 0


def _literal_option(run: list, flags: int) -> frozenset | None:
    """The option a run of literal characters gives: {the run, lowered under IGNORECASE}; the empty set when
    one of its characters never matches an ASCII character; None when one matches ASCII oddly."""
    impossible = False
    for ch in run:
        ok = _ascii_fold_ok(ch, flags)
        if ok < 0:
            return None
        if ok == 0:
            impossible = True
    if impossible:
        return frozenset()
    s = "".join(run)
    return frozenset([s.lower() if flags & re.IGNORECASE else s])


def _option_score(opt: frozenset) -> tuple:
    return (min(map(len, opt)) if opt else 1 << 30, -len(opt))


def _wide_literal_option(run: list, flags: int) -> frozenset | None:
    """The option a run of literal characters gives in a text that is not ASCII: {the run as read_wide reads it}."""
    fold = bool(flags & re.IGNORECASE)
    return frozenset(["".join([_wide_char(ch, fold) for ch in run])])


def _required_literals(seq, flags: int, option: Callable[[list, int], frozenset | None] = _literal_option
                       ) -> frozenset | None:
    """A set of strings one of which every match of the parsed sequence `seq` contains (on an ASCII text; on
    another, read by read_wide, with `option` _wide_literal_option), or None when none is known."""
    c = _sre_modules()[1]

    options: list = []
    run: list = []

    def end_run() -> None:
        if run:
            opt = option(run, flags)
            if opt is not None:
                options.append(opt)
            run.clear()

    for op, av in seq:
        if op is c.LITERAL:
            run.append(chr(av))
            continue
        if op is c.BRANCH and run:
            # A prefix the parser took out of the alternatives ("co" of cookie|consent): the run followed by
            # each alternative's leading literals.
            joined: frozenset | None = frozenset()
            for b in av[1]:
                lead = []
                for bop, bav in b:
                    if bop is not c.LITERAL:
                        break
                    lead.append(chr(bav))
                opt = option(run + lead, flags)
                if opt is None or joined is None:
                    joined = None
                    break
                joined = joined | opt
            if joined is not None:
                options.append(joined)
        end_run()
        sub = None
        if op is c.BRANCH:
            acc: frozenset | None = frozenset()
            for b in av[1]:
                part = _required_literals(b, flags, option)
                if part is None or acc is None:
                    acc = None
                    break
                acc = acc | part
            sub = acc
        elif op is c.SUBPATTERN and not av[1] and not av[2]:
            sub = _required_literals(av[3], flags, option)
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[0] >= 1:
            sub = _required_literals(av[2], flags, option)
        if sub is not None:
            options.append(sub)
    end_run()
    if not options:
        return None
    return max(options, key=_option_score)


def cue_prefilter(rx: re.Pattern[str]) -> tuple[str, ...] | None:
    """The lowered (under IGNORECASE) literals one of which an ASCII text must contain for `rx` to match
    it; None when the regexp is to be searched in every text. Memoized by pattern."""
    key = (rx.pattern, rx.flags)
    if key not in _PREFILTERS:
        _PREFILTERS[key] = _prefilter(rx)
    return _PREFILTERS[key]


def cue_prefilter_wide(rx: re.Pattern[str]) -> tuple[str, ...] | None:
    """The literals one of which a text that is not ASCII, read by read_wide, must contain for `rx` to match it;
    None when the regexp is to be searched in every such text. Memoized by pattern."""
    key = (rx.pattern, rx.flags | _WIDE_KEY)
    if key not in _PREFILTERS:
        _PREFILTERS[key] = _prefilter(rx, _wide_literal_option)
    return _PREFILTERS[key]


_PREFILTERS: Final[dict[tuple[str, int], tuple[str, ...] | None]] = {}
_WIDE_KEY: Final = 1 << 30  # (no re flag)


def cue_branches(rx: re.Pattern[str]) -> list[re.Pattern[str]]:
    """`rx`'s top-level alternatives as regexps of their own, with its flags: a text holds a match of `rx` iff it
    holds one of a branch's. Searched one by one, a branch runs only where its own literals are found, and an
    anchored one (`^...`) is tried at the text's start alone, where the whole alternation was tried at every
    position: the `caption` cue's eight branches cost 36 us a short text so (stop 56). [rx] when it has no
    top-level alternatives, holds a capturing group (a branch could refer to it), or does not split into the same
    parse."""
    source = rx.pattern
    flags = ""
    if source.startswith("(?") and ")" in source:  # global inline flags, `(?i)`: each branch keeps them
        head = source[: source.index(")") + 1]
        if head[2:-1].isalpha():
            flags, source = head, source[len(head):]
    branches: list[str] = []
    depth, start, k, in_class = 0, 0, 0, False
    while k < len(source):
        ch = source[k]
        if ch == "\\":
            k += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if source[k + 1: k + 2] == "^":
                k += 1
            if source[k + 1: k + 2] == "]":  # a `]` first in a class is a literal
                k += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            branches.append(source[start:k])
            start = k + 1
        k += 1
    branches.append(source[start:])
    if len(branches) == 1 or rx.groups:
        return [rx]
    parse = _sre_modules()[0].parse
    try:
        split = [re.compile(flags + branch, rx.flags & ~re.UNICODE) for branch in branches]
        same = repr(parse(flags + "|".join(branches)).data) == repr(parse(rx.pattern).data) and all(
            b.flags == rx.flags for b in split)
    except re.error:
        return [rx]
    return split if same else [rx]


def _prefilter(rx: re.Pattern[str], option: Callable[[list, int], frozenset | None] = _literal_option
               ) -> tuple[str, ...] | None:
    found = _required_literals(_sre_modules()[0].parse(rx.pattern, rx.flags), rx.flags, option)
    if found is None:
        return None
    # A literal containing a shorter one adds nothing ("ads" once "ad" is looked for).
    return tuple(sorted(lit for lit in found if not any(o != lit and o in lit for o in found)))



class CueCache:
    """id/class token -> the `cue.idclass=<cue>` attributes of the cues one of whose substrings it holds,
    built once per token (tokens recur across a site's pages and across sites). (A compiled class, as
    cleaner.page.feature_names.BinTable: idclass_cues calls its lookup directly.)"""

    MAX_ENTRIES = 50_000  # an open vocabulary on a real crawl

    def __init__(self, cues: list, namer=None):
        self.cues = [(("cue.idclass=" + name) if namer is None else namer("cue.idclass=" + name), subs)
                     for name, subs in cues]
        # The same tests in one compiled pass over an ASCII token (compiled_text.LiteralGate: cue k's bit is set iff
        # one of its substrings is in the token), when built. The walk's tokens are runs of [0-9a-z]: all ASCII.
        # (The loop below cost 6,000 instructions a token a page of 2025 brings: 1 M a page.)
        self.gate = (_literal_gate([list(subs) for _, subs in cues], [False] * len(cues))
                     if all(sub for _, subs in cues for sub in subs) else None)
        self.found: dict[str, tuple] = {}

    def __getitem__(self, token: str) -> tuple:
        value = self.found.get(token)
        if value is None:
            value = self._missing(token)
        return value

    def _missing(self, token: str) -> tuple:
        if len(self.found) >= self.MAX_ENTRIES:
            self.found.clear()
        gate = self.gate
        if gate is not None and token.isascii():
            found: int = gate.candidates(token)
            value = tuple(name for k, (name, _) in enumerate(self.cues) if found >> k & 1)
        else:
            value = tuple(name for name, subs in self.cues if any(sub in token for sub in subs))
        self.found[token] = value
        return value


class CueSettings:
    """The family's settings ([features.cues]), compiled. (Models trained before the cue family have no
    [features.cues]: the runtime config's is laid under.)"""

    def __init__(self, config: Config):
        cc = config["features"]["cues"]
        self.max_words = int(cc["max_words"])
        self.idclass = [(str(k), tuple(v)) for k, v in cc["idclass"].items()]
        self.text_names = [str(k) for k in cc["text"]]
        self.text_rx = [re.compile(v) for v in cc["text"].values()]
        # What is searched: each regexp's top-level branches (cue_branches), in the cues' order, and the cue of each.
        split = [cue_branches(rx) for rx in self.text_rx]
        self.text_branches = [branch for branches in split for branch in branches]
        self.text_branch_cue = [k for k, branches in enumerate(split) for _ in branches]
        # Per branch: the literals an ASCII text must contain for it to match (cue_prefilter), None: always
        # searched; and whether they are compared with the lowered text (IGNORECASE).
        self.text_lits = [cue_prefilter(rx) for rx in self.text_branches]
        self.text_lits_wide = [cue_prefilter_wide(rx) for rx in self.text_branches]  # (a text that is not ASCII)
        self.text_fold = [bool(rx.flags & re.IGNORECASE) for rx in self.text_branches]
        # The same prefilter in one compiled pass (compiled_text.LiteralGate), when built.
        self.text_gate = _literal_gate(self.text_lits, self.text_fold, self.text_lits_wide)
        self.page_typer = PageTyper(config)
        self.repeat_bins = [float(b) for b in cc["repeat"]["bins"]]
        self.repeat_links_min = float(cc["repeat"]["links_min_share"])
        self.repeat_min = int(cc["repeat"]["min_siblings"])
        self.heaviest = bool(cc["repeat"]["heaviest"])
        self.code_tags = frozenset(cc["code"]["tags"])
        uc = cc["url"]
        self.url = bool(uc["enabled"])
        self.url_index_segments = frozenset(str(x).lower() for x in uc["index_segments"])
        self.url_index_queries = frozenset(str(x).lower() for x in uc["index_queries"])
        self.url_slug_min_separators = int(uc["slug_min_separators"])
        self.main_min_words = int(cc["main"]["min_words"])
        self.main_share = float(cc["main"]["share"])


class CueNames:
    """The family's attribute names in one naming (cleaner.page.feature_names.AttributeNames): `name` names one
    attribute, `namer` (None: readable) each id/class cue, `repeat_table` is the binned `cue.repeat` table."""

    def __init__(self, settings: CueSettings, name: Callable[[str], object],
                 namer: Callable[[str], object] | None, repeat_table):
        self.idclass = CueCache(settings.idclass, namer)
        self.text = [name("cue.text=" + cue) for cue in settings.text_names]
        self.page = {kind: name("cue.page=" + kind) for kind in settings.page_typer.names}
        self.repeat = repeat_table
        self.repeat_links = name("cue.repeat-links")
        self.heaviest = name("cue.items=heaviest")
        self.heaviest_outside = name("cue.items=heaviest-outside")
        # The same two cues conjoined with the page's type: a listing's heaviest group is its content, a product
        # page's or an article's is more often a shelf of related items.
        kinds = settings.page_typer.names
        self.heaviest_at = {kind: name("cue.items=heaviest@" + kind) for kind in kinds}
        self.repeat_at = {kind: name("cue.repeat@" + kind) for kind in kinds}
        self.code = name("cue.code")
        self.url = {shape: name("cue.url=" + shape) for shape in URL_SHAPES}
        self.heaviest_url = {shape: name("cue.items=heaviest@url=" + shape) for shape in URL_SHAPES}
        self.main = [name("cue.main=" + where) for where in MAIN_RELATIONS]


def idclass_cues(names: CueNames, tokens: tuple[str, ...]) -> list:
    """The `cue.idclass` attributes of a block's id/class `tokens`, each once, in order."""
    found: tuple = ()
    cache = names.idclass
    for token in tokens:
        found += cache[token]
    return list(dict.fromkeys(found)) if found else []


def _literal_gate(literals: list, fold: list[bool], wide_literals: list | None = None):
    """compiled_text.LiteralGate over the cues' prefilter literals (and those for a text that is not ASCII, when
    given); None when it is not built (or for more than the 64 regexps it takes)."""
    compiled = compiled_text_module()
    if compiled is None or len(literals) > 64:
        return None
    return compiled.LiteralGate(literals, fold, wide_literals)


def text_cues(settings: CueSettings, names: CueNames, text: str, out: list) -> None:
    """Append the `cue.text` attributes of a short block's `text` to `out`, in the cues' order. The text is searched
    only by the branches (cue_branches) one of whose prefilter literals it holds (an ASCII text by cue_prefilter's,
    another, read by read_wide, by cue_prefilter_wide's): the loop below, the readable reference of the compiled
    gate that runs when it is built (`settings.text_gate`, the same bits in one pass over the text)."""
    gate = settings.text_gate
    matched = -1  # the cue last found: its other branches are not searched
    if gate is not None:
        found: int = gate.candidates(text)
        if found:  # (most texts: none)
            for k, (cue, rx) in enumerate(zip(settings.text_branch_cue, settings.text_branches)):
                if found >> k & 1 and cue != matched and rx.search(text):
                    out.append(names.text[cue])
                    matched = cue
        return
    ascii = text.isascii()
    low = text.lower() if ascii else read_wide(text, True)
    raw = text if ascii else read_wide(text, False)
    for cue, rx, lits, fold in zip(settings.text_branch_cue, settings.text_branches,
                                   settings.text_lits if ascii else settings.text_lits_wide, settings.text_fold):
        if cue == matched:
            continue
        if lits is not None:
            hay = low if fold else raw
            for lit in lits:
                if lit in hay:
                    break
            else:
                continue  # none of its literals: it cannot match
        if rx.search(text):
            out.append(names.text[cue])
            matched = cue


# Where a block lies against the page's main container (main_relations): the index is the relation.
MAIN_RELATIONS: Final = ("before", "in", "after")


def page_relations(blocks: BlockTable, counts: BlockCounts, page: PageMarks, min_words: int,
                   share: float) -> list[int] | None:
    """main_relations of a page's blocks, computed once for the same blocks and counts (PageMarks.relations_memo): the
    cue family (page_cues) and the fill of the main container (main_container) both read them (0.2 M instructions a
    page of 2025 each time). The result is shared: read it, do not change it."""
    memo = page.relations_memo
    if memo is not None and memo[0] is blocks and memo[1] is counts and memo[2] == min_words and memo[3] == share:
        return memo[4]
    relations = main_relations(blocks, counts, page.element_parent, min_words, share)
    page.relations_memo = (blocks, counts, min_words, share, relations)
    return relations


def main_relations(blocks: BlockTable, counts: BlockCounts, element_parent: list[int], min_words: int,
                   share: float) -> list[int] | None:
    """Each block's place against the page's main container (0 before it, 1 in it, 2 after it; None when the
    page holds no prose): the deepest element holding at least `share` of the page's prose words, reached from
    the root by the child holding most. Prose is the words outside links of visible blocks of at least
    `min_words` words. Why: the content of most pages is one subtree that holds most of its prose, whatever
    the site calls it; a CRF that knows which subtree that is needs no id/class token it has seen (the idea
    behind readability's top candidate and Boilerpipe's largest block, here a feature, not a rule)."""
    n = len(element_parent)
    if n == 0:
        return None
    total = [0] * n
    for element, ancestors, w, lw in zip(blocks.element, blocks.ancestors, counts.words, counts.link_words):
        words = w - lw
        if words >= min_words and 0 <= element < n and HIDDEN not in ancestors:
            total[element] += words
    inside = _main_subtree(total, element_parent, share)
    if inside is None:
        return None
    out: list[int] = []
    seen_inside = False
    for element in blocks.element:
        if 0 <= element < n and inside[element]:
            seen_inside = True
            out.append(1)
        else:
            out.append(2 if seen_inside else 0)
    return out


def main_subtree(words: list[int], element_parent: list[int], share: float) -> list[bool] | None:
    """Per element, whether it lies in the main container (main_relations), from each element's own prose `words`
    (None when there are none): the readable reference of compiled_walk.main_subtree, which runs when it is built."""
    n = len(element_parent)
    total = list(words)
    # Elements are numbered in document order, so every descendant of an element comes after it: summed
    # backwards, an element's total is complete before it is added to its parent's.
    best = [-1] * n
    for e in range(n - 1, 0, -1):
        p = element_parent[e]
        total[p] += total[e]
        if best[p] < 0 or total[e] >= total[best[p]]:
            best[p] = e
    if total[0] <= 0:
        return None
    need = share * total[0]
    top = 0
    while best[top] >= 0 and total[best[top]] >= need:
        top = best[top]
    inside = [False] * n
    inside[top] = True
    for e in range(top + 1, n):
        if inside[element_parent[e]]:
            inside[e] = True
    return inside


# compiled_walk.main_subtree if it is built, else the reference. (A page of 2025 has some 3,000 elements; the
# reference's loops over them cost 0.6 M instructions a call, and a page calls it twice.)
_COMPILED_WALK: Final = compiled_twin("page.compiled_walk")
_main_subtree: Callable[[list[int], list[int], float], list[bool] | None] = (
    main_subtree if _COMPILED_WALK is None else _COMPILED_WALK.main_subtree)


def main_container(blocks: BlockTable, counts: BlockCounts, page: PageMarks, settings: CueSettings,
                   skip_cues: tuple[str, ...] = (), heaviest_types: tuple[str, ...] = ()) -> list[bool] | None:
    """Whether each block lies in the page's main container (main_relations; None when the page holds no
    prose), and -- but on a page whose markup says it is a forum thread (cue.page) -- outside every element an
    id/class token of which names one of `skip_cues` (cues of [features.cues.idclass], as substrings): what
    [decision] fill_main keeps the rest of (cleaner.label.decide). A blog post's container often holds its
    comments too, which `main` leaves out; a thread's posts, often classed as comments and replies, are its content.
    On a page whose type is one of `heaviest_types` ([decision] fill_main_heaviest), the blocks in the items of its
    heaviest repeated group (heaviest_items) are in the container too: a listing's items often lie outside the
    subtree of its most prose (an intro box)."""
    relations = page_relations(blocks, counts, page, settings.main_min_words, settings.main_share)
    if relations is None:
        return None
    kind = settings.page_typer.of(page)
    if kind == "forum":
        skip_cues = ()
    heaviest = heaviest_items(blocks, counts, page, settings.repeat_min) if kind in heaviest_types else None
    if heaviest is not None:
        relations = [1 if h else r for r, h in zip(relations, heaviest)]
    skip = [sub for cue, subs in settings.idclass if cue in skip_cues for sub in subs]
    if not skip:
        return [r == 1 for r in relations]
    # Blocks under one element share its token tuple: each tuple is looked through once a page, and a run of blocks
    # under one element asks its answer by identity (a tuple's hash is not cached: hashing it was ~900 instructions
    # a block).
    skipped: dict[tuple[str, ...], bool] = {}
    out: list[bool] = []
    last: tuple[str, ...] | None = None
    last_hit = False
    for r, tokens in zip(relations, blocks.idclass):
        if r != 1:
            out.append(False)
            continue
        if tokens is last:
            out.append(not last_hit)
            continue
        hit = skipped.get(tokens)
        if hit is None:
            hit = skipped[tokens] = any(sub in token for token in tokens for sub in skip)
        last, last_hit = tokens, hit
        out.append(not hit)
    return out


def heaviest_items(blocks: BlockTable, counts: BlockCounts, page: PageMarks, repeat_min: int
                   ) -> list[bool] | None:
    """Whether each block lies inside an item of the page's heaviest repeated group: of the groups of at least
    `repeat_min` sibling elements of one tag and class (cleaner.page.segment.mark_repeats), the one whose items hold
    most visible words, link text included (None when the page has no such group). Why: a listing's content is its
    items, each a title (a link) and a summary, and they hold more of the page than any menu, whose items are a few
    words each; the main container (main_relations) weighs prose alone and on a listing often finds an intro box."""
    memo = page.heaviest_memo  # (the cue family and the fill of a listing both ask: found once a page)
    if memo is not None and memo[0] is blocks and memo[1] is counts and memo[2] == repeat_min:
        return memo[3]
    result = _heaviest_items(blocks, counts, page, repeat_min)
    page.heaviest_memo = (blocks, counts, repeat_min, result)
    return result


def _heaviest_items(blocks: BlockTable, counts: BlockCounts, page: PageMarks, repeat_min: int
                    ) -> list[bool] | None:
    element_parent = page.element_parent
    element_group = page.element_group
    n = len(element_parent)
    if n == 0 or len(element_group) != n:
        return None
    words = [0] * n
    for element, ancestors, w in zip(blocks.element, blocks.ancestors, counts.words):
        if 0 <= element < n and HIDDEN not in ancestors:
            words[element] += w
    inside = _heaviest_subtree(words, element_parent, element_group, page.group_size, repeat_min)
    if inside is None:
        return None
    return [0 <= element < n and inside[element] for element in blocks.element]


def heaviest_subtree(words: list[int], element_parent: list[int], element_group: list[int], group_size: list[int],
                     repeat_min: int) -> list[bool] | None:
    """Per element, whether it lies inside an item of the heaviest group of at least `repeat_min` items (None when
    there is none), from each element's own visible `words`: the readable reference of compiled_walk.heaviest_subtree,
    which runs when it is built. `element_group`: per element its group (-1: none), `group_size`: per group its
    items (the walk's, cleaner.page.segment.mark_repeats)."""
    n = len(element_parent)
    total = list(words)
    # Summed backwards (document order: a descendant comes after its element), an element's total is complete
    # before it is added to its parent's and to its group's.
    group_words = [0] * len(group_size)
    for e in range(n - 1, 0, -1):
        w = total[e]
        total[element_parent[e]] += w
        group = element_group[e]
        if group >= 0:
            group_words[group] += w
    heaviest = -1
    most = 0
    for group in range(len(group_size)):
        if group_size[group] >= repeat_min and group_words[group] > most:
            heaviest, most = group, group_words[group]
    if heaviest < 0:
        return None
    inside = [False] * n
    for e in range(1, n):
        inside[e] = inside[element_parent[e]] or element_group[e] == heaviest
    return inside


# compiled_walk.heaviest_subtree if it is built, else the reference (its loops over a page's ~3,000 elements cost
# 0.9 M instructions a page of 2025, docs/speed.md).
_heaviest_subtree: Callable[[list[int], list[int], list[int], list[int], int], list[bool] | None] = (
    heaviest_subtree if _COMPILED_WALK is None else _COMPILED_WALK.heaviest_subtree)


URL_SHAPES: Final = ("none", "root", "short", "index", "slug", "other")
_DATED_PATH: Final = re.compile(r"/(?:19|20)\d\d/\d\d?/")
_DIRECTORY_INDEX: Final = re.compile(r"(?:index|default)\.\w+", re.IGNORECASE)
_LONG_NUMBER: Final = re.compile(r"\d{5,}")


def url_shape(url: str, settings: CueSettings) -> str:
    """The shape of a page's URL, one of URL_SHAPES: `root` (a site's home page), `slug` (a dated path, or a last
    segment of several words or a long number: an article's, a product's), `index` (a segment or query key of
    `index_segments` / `index_queries`: category, tag and search pages), `short` (one segment), `other`; `none` when
    there is no URL. Only the path's shape counts, not the site: this is evidence for the CRF, not a rule."""
    url = url.strip()
    if not url:
        return "none"
    try:
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return "none"
    segments = [s for s in parts.path.split("/") if s]
    if segments and _DIRECTORY_INDEX.fullmatch(segments[-1]):
        segments.pop()
    if not segments and not query:
        return "root"
    last = segments[-1].lower() if segments else ""
    if (_DATED_PATH.search(parts.path) or last.count("-") + last.count("_") >= settings.url_slug_min_separators
            or _LONG_NUMBER.search(last)):
        return "slug"
    if (any(s.lower() in settings.url_index_segments for s in segments)
            or any(k.lower() in settings.url_index_queries for k, _ in query)):
        return "index"
    if len(segments) <= 1:
        return "short"
    return "other"


class PageCueContext:
    """What the `cue` attributes that need the page read of it (page_cue_context), in one naming: the page's
    type and URL shape named, the blocks' relation to the main container and which blocks lie in the heaviest
    repeated group. `block_cues` lays them out per block; so does the compiled pass (compiled_rows.RowPass), with
    this as its input."""

    def __init__(self, names: CueNames, kind: object, url: object, heaviest_url: object, heaviest_at: object,
                 repeat_at: object, relations: list[int] | None, heaviest: list[bool] | None, links_min: float,
                 code_tags: frozenset[str]) -> None:
        self.names = names
        self.kind = kind  # cue.page=<type>
        self.url = url  # cue.url=<shape>, None without the URL cue
        self.heaviest_url = heaviest_url
        self.heaviest_at = heaviest_at
        self.repeat_at = repeat_at
        self.relations = relations  # per block, its index in MAIN_RELATIONS (None: no page marks)
        self.heaviest = heaviest  # per block, whether it lies in the heaviest repeated group (None: not asked)
        self.links_min = links_min  # an item whose words are this share of link text or more: cue.repeat-links
        self.code_tags = code_tags


def page_cue_context(settings: CueSettings, names: CueNames, blocks: BlockTable, counts: BlockCounts,
                     page: PageMarks | None) -> PageCueContext:
    """What page_cues reads of the page, found once."""
    kind_name = settings.page_typer.of(page) if page is not None else "unknown"
    relations = (page_relations(blocks, counts, page, settings.main_min_words, settings.main_share)
                 if page is not None else None)
    heaviest = (heaviest_items(blocks, counts, page, settings.repeat_min)
                if settings.heaviest and page is not None else None)
    url = None
    heaviest_url = None
    if settings.url:
        shape = url_shape(page.canonical or page.head_meta.get("og:url", ""), settings) if page is not None else "none"
        url = names.url[shape]
        heaviest_url = names.heaviest_url[shape]
    return PageCueContext(names, names.page[kind_name], url, heaviest_url, names.heaviest_at[kind_name],
                          names.repeat_at[kind_name], relations, heaviest, settings.repeat_links_min,
                          settings.code_tags)


def page_cues(settings: CueSettings, names: CueNames, blocks: BlockTable, counts: BlockCounts,
              page: PageMarks | None) -> list[list]:
    """The `cue` attributes that need the page: its type (cue.page, on every block), the repeated item a
    block sits in (cue.repeat, cue.repeat-links: the item's words mostly link text) and code (cue.code).
    `counts` are the blocks' (cleaner.page.features.FeatureExtractor.counts)."""
    return block_cues(page_cue_context(settings, names, blocks, counts, page), blocks, counts)


def block_cues(c: PageCueContext, blocks: BlockTable, counts: BlockCounts) -> list[list]:
    """page_cues' attributes per block, from what it read of the page: the readable reference of the same loop in
    compiled_rows.RowPass."""
    # Words and link words of each repeated item, over the blocks inside it.
    item_words: dict[int, int] = {}
    item_links: dict[int, int] = {}
    for item, w, lw in zip(blocks.repeat_item, counts.words, counts.link_words):
        if item >= 0:
            item_words[item] = item_words.get(item, 0) + w
            item_links[item] = item_links.get(item, 0) + lw
    names = c.names
    relations, heaviest, url, heaviest_url = c.relations, c.heaviest, c.url, c.heaviest_url
    in_code: dict[frozenset[str], bool] = {}  # ancestors -> inside a code tag (a page has a few dozen such sets)
    out: list[list] = []
    for i in range(len(blocks)):
        row = [c.kind]
        if url is not None:
            row.append(url)
        if relations is not None:
            row.append(names.main[relations[i]])
        repeat = blocks.repeat[i]
        if repeat:
            row.append(names.repeat[repeat])
            row.append(c.repeat_at)
            item = blocks.repeat_item[i]
            words = item_words[item]
            if words and item_links[item] >= c.links_min * words:
                row.append(names.repeat_links)
        if heaviest is not None and heaviest[i]:
            row.append(names.heaviest)
            row.append(c.heaviest_at)
            if heaviest_url is not None:
                row.append(heaviest_url)
            if relations is not None and relations[i] != 1:
                row.append(names.heaviest_outside)
        anc = blocks.ancestors[i]
        code = in_code.get(anc)
        if code is None:
            code = in_code[anc] = not c.code_tags.isdisjoint(anc)
        if code:
            row.append(names.code)
        out.append(row)
    return out
