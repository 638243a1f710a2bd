"""Formulas a reader sees, as the text of a block: MathML, KaTeX and MathJax kept as TeX.

The segmenter drops `<math>` and `<script>` with their content (they are in [segment] drop_tags), and a formula
then vanished without a trace: "Both cost <math>...</math> comparisons" read "Both cost comparisons". It now
asks this module for the formula's text and makes it a block of its own (Block.artificial "math"), in its place
in the line, so the text reads "Both cost $O(n \\log n)$ comparisons":

* MathML: its TeX annotation (`<annotation encoding="application/x-tex">`, as KaTeX and many converters write),
  else its `alttext`, else its presentation elements converted to TeX (`mathml_tex`: fractions, scripts, roots,
  sums and accents, matrices, fences; identifiers and operators as TeX names), as MathJax 3's assistive MathML,
  hand-written pages and editors' exports give it with no TeX beside it.
* MathJax 2's source, `<script type="math/tex">` (`; mode=display` for display math).
* TeX is written `$...$` inline and `$$...$$` for display math (`display="block"`, MathJax's `mode=display`),
  on a line of its own.
* The rendered copies that sit beside a source are not read again: KaTeX's `katex-html` (the formula drawn
  with spans, beside its MathML), MathJax 2's rendered frame (`id="MathJax-Element-N-Frame"`) and its
  `MathJax_Preview`.

TeX already in the page's text (`$...$`, `\\(...\\)`) is ordinary text and stays as it is.
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborNode

from .text import normalise_space

_TEX_ENCODINGS = ("application/x-tex", "tex", "latex", "text/x-tex")


def math_block(node: LexborNode) -> tuple[str, bool] | None:
    """The text of a `<math>` element and whether it is display math; None when it has nothing to read."""
    attrs = node.attributes or {}
    display = (attrs.get("display") or "").lower() == "block" or (attrs.get("mode") or "").lower() == "display"
    tex = _annotation_tex(node) or normalise_space(attrs.get("alttext") or "") or mathml_tex(node)
    return (_dollars(tex, display), display) if tex else None


def script_block(node: LexborNode) -> tuple[str, bool] | None:
    """The TeX of a MathJax 2 source (`<script type="math/tex[; mode=display]">`) and whether it is display
    math; None for any other script."""
    attrs = node.attributes
    kind = (attrs.get("type") or "").lower() if attrs else ""
    if not is_tex_script(kind):
        return None
    return tex_script_block(kind, node.text(deep=True))


def is_tex_script(kind: str) -> bool:
    """Whether a script of this type (lower case) is a MathJax 2 source."""
    return kind.startswith("math/tex")


def tex_script_block(kind: str, source: str) -> tuple[str, bool] | None:
    """script_block from the script's type (lower case) and its text (the compiled walk reads them itself)."""
    display = "mode=display" in kind.replace(" ", "")
    tex = normalise_space(source)
    return (_dollars(tex, display), display) if tex else None


def is_rendered_copy(attrs: dict) -> bool:
    """Whether an element is the drawn copy of a formula whose source is read instead (module docstring)."""
    classes = attrs.get("class")
    if classes and ("katex-html" in classes.split() or "MathJax_Preview" in classes.split()):
        return True
    ident = attrs.get("id")
    return isinstance(ident, str) and ident.startswith("MathJax-Element-") and ident.endswith("-Frame")


def _dollars(tex: str, display: bool) -> str:
    return f"$${tex}$$" if display else f"${tex}$"


def _annotation_tex(node: LexborNode) -> str:
    """The first TeX annotation under `node` (a <semantics> holds it), whitespace normalised; '' if none."""
    stack = [node.child]
    while stack:
        child = stack.pop()
        while child is not None:
            tag = child.tag
            if tag == "annotation":
                attrs = child.attributes or {}
                if (attrs.get("encoding") or "").lower() in _TEX_ENCODINGS:
                    tex = normalise_space(child.text(deep=True))
                    if tex:
                        return tex
            elif tag and tag[0] != "-" and child.child is not None:
                stack.append(child.next)
                child = child.child
                continue
            child = child.next
    return ""


# -- MathML without TeX: its presentation elements converted ------------------------------------------------------
#
# What a reader sees of the formula, written as TeX a renderer draws alike: the common presentation elements
# (MathML Core and the MathML 3 elements pages still write: mfenced, menclose, mmultiscripts), identifiers,
# numbers and operators with TeX names for the characters that have one. Elements it does not know are read
# through (their children in order); elements not shown (annotations, mphantom) are left out.

_GREEK = dict(zip(
    "αβγδεζηθικλμνξπρστυφχψωϵϑϕϖϱςΓΔΘΛΞΠΣΥΦΨΩ",
    r"\alpha \beta \gamma \delta \varepsilon \zeta \eta \theta \iota \kappa \lambda \mu \nu \xi \pi \rho \sigma "
    r"\tau \upsilon \varphi \chi \psi \omega \epsilon \vartheta \phi \varpi \varrho \varsigma \Gamma \Delta \Theta "
    r"\Lambda \Xi \Pi \Sigma \Upsilon \Phi \Psi \Omega".split()))
# Characters of identifiers and operators that TeX writes as a command (or not at all: the invisible operators
# MathML puts between a function and its argument, or between factors)
_SYMBOLS = {
    **_GREEK,
    "±": r"\pm", "∓": r"\mp", "×": r"\times", "÷": r"\div", "·": r"\cdot", "⋅": r"\cdot", "∘": r"\circ",
    "∗": "*", "−": "-", "‐": "-", "≤": r"\leq", "⩽": r"\leq", "≥": r"\geq", "⩾": r"\geq", "≠": r"\neq",
    "≈": r"\approx", "≡": r"\equiv", "∼": r"\sim", "≃": r"\simeq", "≅": r"\cong", "∝": r"\propto", "≪": r"\ll",
    "≫": r"\gg", "≺": r"\prec", "≻": r"\succ", "∈": r"\in", "∉": r"\notin", "∋": r"\ni", "⊂": r"\subset",
    "⊃": r"\supset", "⊆": r"\subseteq", "⊇": r"\supseteq", "∪": r"\cup", "∩": r"\cap", "∖": r"\setminus",
    "∅": r"\emptyset", "∀": r"\forall", "∃": r"\exists", "∄": r"\nexists", "¬": r"\neg", "∧": r"\wedge",
    "∨": r"\vee", "⊕": r"\oplus", "⊗": r"\otimes", "⊙": r"\odot", "→": r"\to", "←": r"\leftarrow",
    "↔": r"\leftrightarrow", "⇒": r"\Rightarrow", "⇐": r"\Leftarrow", "⇔": r"\Leftrightarrow", "↦": r"\mapsto",
    "⟶": r"\longrightarrow", "⟹": r"\Longrightarrow", "↑": r"\uparrow", "↓": r"\downarrow", "∞": r"\infty",
    "∂": r"\partial", "∇": r"\nabla", "∑": r"\sum", "∏": r"\prod", "∐": r"\coprod", "∫": r"\int",
    "∬": r"\iint", "∭": r"\iiint", "∮": r"\oint", "⋃": r"\bigcup", "⋂": r"\bigcap", "⨁": r"\bigoplus",
    "⨂": r"\bigotimes", "⋁": r"\bigvee", "⋀": r"\bigwedge", "…": r"\ldots", "⋯": r"\cdots", "⋮": r"\vdots",
    "⋱": r"\ddots", "′": "'", "″": "''", "‴": "'''", "∣": "|", "∥": r"\|", "‖": r"\|",
    "⊥": r"\perp", "∠": r"\angle", "△": r"\triangle", "□": r"\square", "ℏ": r"\hbar", "ℓ": r"\ell",
    "ℜ": r"\Re", "ℑ": r"\Im", "ℵ": r"\aleph", "℘": r"\wp", "⊤": r"\top", "⊢": r"\vdash", "⊨": r"\models",
    "√": r"\surd", "°": r"^{\circ}", "⟨": r"\langle", "⟩": r"\rangle", "〈": r"\langle", "〉": r"\rangle",
    "⌊": r"\lfloor", "⌋": r"\rfloor", "⌈": r"\lceil", "⌉": r"\rceil", "ℝ": r"\mathbb{R}", "ℕ": r"\mathbb{N}",
    "ℤ": r"\mathbb{Z}", "ℚ": r"\mathbb{Q}", "ℂ": r"\mathbb{C}",
    "{": r"\{", "}": r"\}", "%": r"\%", "#": r"\#", "&": r"\&", "$": r"\$", "_": r"\_", "\\": r"\backslash",
    "~": r"\sim", "^": r"\hat{}", "\u2061": "", "\u2062": "", "\u2063": "", "\u2064": "", "\u00a0": " ",
}
# Names TeX writes upright as operators (`\sin x`); another identifier of several letters is `\mathrm{...}`
_FUNCTIONS = frozenset((
    "sin", "cos", "tan", "cot", "sec", "csc", "sinh", "cosh", "tanh", "coth", "arcsin", "arccos", "arctan", "log",
    "ln", "lg", "exp", "lim", "liminf", "limsup", "max", "min", "sup", "inf", "det", "dim", "ker", "deg", "gcd",
    "hom", "arg", "Pr",
))
# Operators whose under and over scripts TeX sets as limits itself: `\sum_{i=1}^{n}`, not \underset
_LIMITS = frozenset((
    r"\sum", r"\prod", r"\coprod", r"\int", r"\iint", r"\iiint", r"\oint", r"\bigcup", r"\bigcap", r"\bigoplus",
    r"\bigotimes", r"\bigvee", r"\bigwedge", r"\lim", r"\liminf", r"\limsup", r"\max", r"\min", r"\sup", r"\inf",
    r"\det", r"\gcd", r"\Pr",
))
# An <mover>'s or <munder>'s script that is an accent or a brace on its base
_OVER = {"^": r"\hat", "ˆ": r"\hat", "\u0302": r"\hat", "~": r"\tilde", "˜": r"\tilde", "\u0303": r"\tilde",
         "¯": r"\bar", "ˉ": r"\bar", "\u0304": r"\bar", "‾": r"\overline", "→": r"\vec", "⃗": r"\vec",
         "˙": r"\dot", "\u0307": r"\dot", "¨": r"\ddot", "\u0308": r"\ddot", "ˇ": r"\check", "˘": r"\breve",
         "´": r"\acute", "`": r"\grave", "⏞": r"\overbrace", "︷": r"\overbrace", "←": r"\overleftarrow",
         "↔": r"\overleftrightarrow"}
_UNDER = {"_": r"\underline", "‾": r"\underline", "¯": r"\underline", "⏟": r"\underbrace", "︸": r"\underbrace"}
_VARIANTS = {"bold": r"\mathbf", "double-struck": r"\mathbb", "script": r"\mathcal", "fraktur": r"\mathfrak",
             "bold-italic": r"\boldsymbol", "sans-serif": r"\mathsf", "monospace": r"\mathtt", "normal": r"\mathrm"}
# A matrix between these fences is that environment: ( ) pmatrix, [ ] bmatrix, | | vmatrix...; `{` alone: cases
_MATRIX_FENCES = {("(", ")"): "pmatrix", ("[", "]"): "bmatrix", ("|", "|"): "vmatrix", ("‖", "‖"): "Vmatrix",
                  ("∥", "∥"): "Vmatrix", ("{", "}"): "Bmatrix", ("{", ""): "cases"}
# MathML elements not shown (an annotation other than TeX: content MathML, an image; a phantom's space)
_UNSHOWN = frozenset(("annotation", "annotation-xml", "mphantom", "none", "mprescripts"))
_TEX_SPECIAL = re.compile(r"[\\{}%#&$_~^]")
_CONTROL_WORD_END = re.compile(r"\\[A-Za-z]+$")
_SPACES = re.compile(r"\s+")
# Spaces written as characters (KaTeX's \, \: \; \ ), and <mspace> widths in em up to which a TeX space is meant
_SPACE_CHARS = {"\u2009": r"\,", "\u200a": r"\,", "\u2005": r"\:", "\u205f": r"\:", "\u2005\u200a": r"\;",
                "\u00a0": r"\ ", " ": r"\ ", "\u2009\u2063": r"\!"}
_SPACE_WIDTHS = ((0.0, ""), (0.17, r"\,"), (0.23, r"\:"), (0.3, r"\;"), (0.6, r"\enspace"), (1.1, r"\quad"))
# Deeper than this (a page nesting thousands of <mrow>s), the rest of a formula is read as its characters.
_MAX_DEPTH = 200


def mathml_tex(node: LexborNode) -> str:
    """A `<math>` element's presentation MathML as TeX, whitespace normalised; '' when it shows nothing."""
    return normalise_space(_tex_of_children(node, 0))


def _children(node: LexborNode) -> list[LexborNode]:
    """The element children of `node` that are shown."""
    out = []
    child = node.child
    while child is not None:
        tag = child.tag
        if tag and tag[0] not in "-!" and tag not in _UNSHOWN:
            out.append(child)
        child = child.next
    return out


def _arguments(node: LexborNode) -> list[LexborNode]:
    """The children of an element that takes a fixed number of arguments (`<none/>` counts as an empty one)."""
    out = []
    child = node.child
    while child is not None:
        tag = child.tag
        if tag and tag[0] not in "-!" and tag not in ("annotation", "annotation-xml", "mprescripts"):
            out.append(child)
        child = child.next
    return out


def _join(pieces: list[str]) -> str:
    """TeX pieces side by side, a space only where a control word would run into the letter after it."""
    out = ""
    for piece in pieces:
        if not piece:
            continue
        if out and piece[0].isalpha() and _CONTROL_WORD_END.search(out):
            out += " "
        out += piece
    return out


def _group(tex: str) -> str:
    return "{" + tex + "}"


def _token_text(node: LexborNode) -> str:
    return normalise_space(node.text(deep=True) or "")


def _symbols(text: str) -> str:
    return _join([_SYMBOLS.get(c, c) for c in text])


def _identifier(node: LexborNode, text: str) -> str:
    attrs = node.attributes or {}
    variant = _VARIANTS.get((attrs.get("mathvariant") or "").lower())
    if len(text) > 1 and text in _FUNCTIONS:
        return "\\" + text
    if len(text) > 1 and not text.isdigit():  # several letters: a word set upright, as MathML shows it
        return (variant or r"\mathrm") + _group(_TEX_SPECIAL.sub(lambda m: _SYMBOLS[m.group()], text))
    tex = _symbols(text)
    if variant is None or (variant == r"\mathrm" and not (text.isascii() and text.isalpha())):
        return tex  # (TeX sets capital Greek and symbols upright already)
    return variant + _group(tex)


_IN_TEXT = {"\\": r"\textbackslash{}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _text(text: str) -> str:
    return r"\text" + _group(_TEX_SPECIAL.sub(lambda m: _IN_TEXT.get(m.group()) or "\\" + m.group(), text))


def _tex_of_children(node: LexborNode, depth: int) -> str:
    children = _children(node)
    pieces: list[str] = []
    k = 0
    while k < len(children):
        child = children[k]
        # a table between fences, as converters write a matrix: ( <mtable> ) -> \begin{pmatrix}
        if child.tag == "mo" and k + 1 < len(children) and children[k + 1].tag == "mtable":
            opening = _token_text(child)
            closing = _token_text(children[k + 2]) if k + 2 < len(children) and children[k + 2].tag == "mo" else ""
            env = _MATRIX_FENCES.get((opening, closing)) or (_MATRIX_FENCES.get((opening, "")) if
                                                             k + 2 >= len(children) else None)
            if env is not None:
                pieces.append(_matrix(children[k + 1], env, depth + 1))
                k += 3 if closing else 2
                continue
        pieces.append(_tex(child, depth + 1))
        k += 1
    return _join(pieces)


def _tex(node: LexborNode, depth: int) -> str:
    """One MathML element as TeX."""
    tag = node.tag
    if depth > _MAX_DEPTH:
        return _symbols(_token_text(node))
    if tag == "mi":
        text = _token_text(node)
        return _identifier(node, text) if text else ""
    if tag == "mn":
        return _symbols(_token_text(node))
    if tag == "mo":
        text = _token_text(node)
        if text == "∣" and not {"fence", "stretchy"} & set(node.attributes or {}):
            return r"\mid"  # (the relation, P(A | B); a fence | is an absolute value's or a norm's)
        return "\\" + text if text in _FUNCTIONS else _symbols(text)
    if tag == "mtext":  # (its spaces are shown: "if x" is `\text{if }x`)
        raw = node.text(deep=True) or ""
        if not raw.strip():  # (a space between two parts of the formula, as KaTeX writes \, and \;)
            return _SPACE_CHARS.get(raw, r"\ ") if raw else ""
        return _text(_SPACES.sub(" ", raw))
    if tag == "ms":
        return _text('"' + _token_text(node) + '"')
    if tag == "mspace":
        return _space(node)
    if tag in ("mfrac", "msqrt", "mroot", "msub", "msup", "msubsup", "munder", "mover", "munderover",
               "mmultiscripts"):
        return _scripted(node, tag, depth)
    if tag == "mtable":
        return _matrix(node, "matrix", depth)
    if tag == "mfenced":
        return _fenced(node, depth)
    if tag == "maction":  # (what it shows first)
        args = _children(node)
        return _tex(args[0], depth + 1) if args else ""
    if tag == "semantics":  # (its first child is the formula; the rest are annotations)
        args = _children(node)
        return _tex(args[0], depth + 1) if args else ""
    return _tex_of_children(node, depth)  # math, mrow, mstyle, mpadded, menclose, merror, and any other


def _space(node: LexborNode) -> str:
    """An <mspace> as the TeX space of its width (`\\,` to `\\qquad`); none when it has no width."""
    width = ((node.attributes or {}).get("width") or "").strip()
    match = re.fullmatch(r"(\d*\.?\d+)\s*em", width)
    if match is None:
        return r"\ " if width and not width.startswith(("0", "-")) else ""
    em = float(match.group(1))
    for most, tex in _SPACE_WIDTHS:
        if em <= most:
            return tex
    return r"\qquad"


def _argument(node: LexborNode, depth: int) -> str:
    """An argument of a script or a fraction: an inferred <mrow> of its children when it has several."""
    return "" if node.tag == "none" else _tex(node, depth + 1)


def _base(node: LexborNode, depth: int) -> str:
    """A script's base, in braces when it is a row of several elements (`{(a+b)}^{2}`), `{}` when empty."""
    tex = _argument(node, depth)
    if not tex:
        return "{}"
    if node.tag not in ("mi", "mn", "mo", "mtext", "ms") and len(_children(node)) > 1:
        return _group(tex)
    return tex


def _scripted(node: LexborNode, tag: str, depth: int) -> str:
    args = _arguments(node)
    if tag == "msqrt":
        return r"\sqrt" + _group(_tex_of_children(node, depth))
    if not args:
        return ""
    tex = [_argument(a, depth) for a in args]
    while len(tex) < 3:
        tex.append("")
    if tag == "mfrac":
        attrs = node.attributes or {}
        if (attrs.get("linethickness") or "").strip().rstrip("pxem").strip() in ("0", "0.0"):
            return _group(tex[0] + r" \atop " + tex[1])  # a binomial's two rows, no bar
        if (attrs.get("bevelled") or "").lower() == "true":
            return _group(tex[0]) + "/" + _group(tex[1])
        return r"\frac" + _group(tex[0]) + _group(tex[1])
    if tag == "mroot":
        return r"\sqrt[" + tex[1] + "]" + _group(tex[0])
    base = _base(args[0], depth)
    if tag == "msub":
        return base + "_" + _group(tex[1])
    if tag == "msup":
        return base + _superscript(tex[1])
    if tag == "msubsup":
        return base + "_" + _group(tex[1]) + _superscript(tex[2])
    if tag == "mmultiscripts":
        return _multiscripts(node, depth)
    under = tex[1] if tag in ("munder", "munderover") else ""
    over = tex[1] if tag == "mover" else tex[2] if tag == "munderover" else ""
    if base in _LIMITS or tex[0].startswith((r"\overbrace", r"\underbrace")):
        base = base if base in _LIMITS else tex[0]  # (a brace's label is its script: \overbrace{...}^{n})
        return base + ("_" + _group(under) if under else "") + ("^" + _group(over) if over else "")
    script_text = _token_text(args[1]) if len(args) > 1 else ""
    if tag == "mover" and script_text in _OVER:
        accent = _OVER[script_text]
        if accent == r"\bar" and len(_token_text(args[0])) > 1:
            accent = r"\overline"
        return accent + _group(tex[0])
    if tag == "munder" and script_text in _UNDER:
        return _UNDER[script_text] + _group(tex[0])
    out = tex[0]
    if over:
        out = r"\overset" + _group(over) + _group(out)
    if under:
        out = r"\underset" + _group(under) + _group(out)
    return out


def _superscript(tex: str) -> str:
    """`^{...}`, or the primes themselves (`f'`: TeX's prime is a superscript already)."""
    return tex if tex and set(tex) == {"'"} else "^" + _group(tex)


def _multiscripts(node: LexborNode, depth: int) -> str:
    """<mmultiscripts>: a base, then pairs of (subscript, superscript) after it, and after <mprescripts/> pairs
    before it: `{}_{c}^{d}X_{a}^{b}`."""
    base = ""
    post: list[str] = []
    pre: list[str] = []
    scripts = post
    child = node.child
    while child is not None:
        tag = child.tag
        if tag == "mprescripts":
            scripts = pre
        elif tag and tag[0] not in "-!" and tag not in ("annotation", "annotation-xml"):
            if not base:
                base = _base(child, depth)
            else:
                scripts.append(_argument(child, depth))
        child = child.next

    def attached(pairs: list[str]) -> str:
        out = ""
        for k in range(0, len(pairs), 2):
            sub, sup = pairs[k], pairs[k + 1] if k + 1 < len(pairs) else ""
            out += ("_" + _group(sub) if sub else "") + ("^" + _group(sup) if sup else "")
        return out

    return ("{}" + attached(pre) if pre else "") + (base or "{}") + attached(post)


def _matrix(node: LexborNode, env: str, depth: int) -> str:
    rows = []
    for row in _children(node):
        cells = _children(row) if row.tag in ("mtr", "mlabeledtr") else [row]
        if row.tag == "mlabeledtr":
            cells = cells[1:]  # (its first cell is the equation's label)
        rows.append(" & ".join(_tex_of_children(c, depth + 1) if c.tag == "mtd" else _tex(c, depth + 1)
                               for c in cells))
    return r"\begin{" + env + "}" + r" \\ ".join(rows) + r"\end{" + env + "}"


def _fenced(node: LexborNode, depth: int) -> str:
    """<mfenced open="(" close=")" separators=",">: its children between fences, separated."""
    attrs = node.attributes or {}
    opening = (attrs.get("open", "(") or "").strip()  # (an attribute written without a value: no fence)
    closing = (attrs.get("close", ")") or "").strip()
    separators = "".join((attrs.get("separators", ",") or "").split())
    args = _children(node)
    if len(args) == 1 and args[0].tag == "mtable":
        env = _MATRIX_FENCES.get((opening, closing))
        if env is not None:
            return _matrix(args[0], env, depth + 1)
    pieces = [_symbols(opening)]
    for k, arg in enumerate(args):
        if k and separators:
            pieces.append(_symbols(separators[min(k - 1, len(separators) - 1)]))
        pieces.append(_tex(arg, depth + 1))
    pieces.append(_symbols(closing))
    return _join(pieces)
