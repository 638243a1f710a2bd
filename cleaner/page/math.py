"""Formulas a reader sees, as the text of a block: MathML, KaTeX and MathJax kept as TeX.

The segmenter drops `<math>` and `<script>` with their content (they are in [segment] drop_tags), and a formula
then vanished without a trace: "Both cost <math>...</math> comparisons" read "Both cost comparisons". It now
asks this module for the formula's text and makes it a block of its own (Block.artificial "math"), in its place
in the line, so the text reads "Both cost $O(n \\log n)$ comparisons":

* MathML: its TeX annotation (`<annotation encoding="application/x-tex">`, as KaTeX and many converters write),
  else its `alttext`, else the text of its elements (`<mi>`, `<mo>`, `<mn>`, `<mtext>`...) as a reader would
  read them aloud, space-separated but brackets and punctuation touching (not TeX, so not put between dollars).
* MathJax 2's source, `<script type="math/tex">` (`; mode=display` for display math).
* TeX is written `$...$` inline and `$$...$$` for display math (`display="block"`, MathJax's `mode=display`),
  on a line of its own.
* The rendered copies that sit beside a source are not read again: KaTeX's `katex-html` (the formula drawn
  with spans, beside its MathML), MathJax 2's rendered frame (`id="MathJax-Element-N-Frame"`) and its
  `MathJax_Preview`.

TeX already in the page's text (`$...$`, `\\(...\\)`) is ordinary text and stays as it is.
"""

from __future__ import annotations

from selectolax.lexbor import LexborNode

from .text import normalise_space

_TEX_ENCODINGS = ("application/x-tex", "tex", "latex", "text/x-tex")
# MathML's token elements: what a reader reads of a formula that carries no TeX
_TOKENS = frozenset(("mi", "mn", "mo", "mtext", "ms"))
# MathML elements that are not shown (an annotation other than TeX: content MathML, an image, ...)
_UNSHOWN = frozenset(("annotation", "annotation-xml", "none", "mprescripts"))


def math_block(node: LexborNode) -> tuple[str, bool] | None:
    """The text of a `<math>` element and whether it is display math; None when it has nothing to read."""
    attrs = node.attributes or {}
    display = (attrs.get("display") or "").lower() == "block" or (attrs.get("mode") or "").lower() == "display"
    tex = _annotation_tex(node) or normalise_space(attrs.get("alttext") or "")
    if tex:
        return _dollars(tex, display), display
    tokens: list[str] = []
    _read_tokens(node, tokens)
    text = normalise_space(_join_tokens(tokens))
    return (text, display) if text else None


_OPENING = frozenset("([{⟨")
_CLOSING = frozenset(")]}⟩,;.!?")


def _join_tokens(tokens: list[str]) -> str:
    """Tokens read aloud: space-separated, but brackets and punctuation touch what they enclose or follow,
    as the formula shows them ("O(n log n)", not "O ( n log n )")."""
    out = ""
    previous = ""
    for token in tokens:
        touches = (token in _CLOSING or previous in _OPENING
                   or (token in _OPENING and previous[-1:].isalnum()))  # f(x), O(n): a function's argument
        if out and not touches:
            out += " "
        out += token
        previous = token
    return out


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


def _read_tokens(node: LexborNode, out: list[str]) -> None:
    """The text of the MathML token elements under `node`, in document order (annotations left out)."""
    stack = [node.child]
    while stack:
        child = stack.pop()
        while child is not None:
            tag = child.tag
            if tag in _TOKENS:
                text = child.text(deep=True)
                if text and not text.isspace():
                    out.append(text.strip())
            elif tag and tag[0] != "-" and tag not in _UNSHOWN and child.child is not None:
                stack.append(child.next)
                child = child.child
                continue
            child = child.next
