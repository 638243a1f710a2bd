"""Formulas a reader sees stay in the text (cleaner.page.math): MathML, KaTeX and MathJax kept as TeX.

Before, <math> and MathJax's <script type="math/tex"> were dropped with their content and the formula vanished
without a trace ("Both cost comparisons").
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from selectolax.lexbor import LexborHTMLParser

from cleaner.api import clean_html
from cleaner.page.math import math_block, mathml_tex

# A paragraph long enough that the default model keeps it on its own merits.
BEFORE = "Merge sort and heap sort are two classic algorithms for ordering a list of items. Both cost "
AFTER = (" comparisons in the worst case, which is optimal for comparison sorts, as counting the leaves of a "
         "decision tree shows.")
MATHML_TEX = ('<math><semantics><mrow><mi>O</mi><mo>(</mo><mi>n</mi><mi>log</mi><mi>n</mi><mo>)</mo></mrow>'
              '<annotation encoding="application/x-tex">O(n \\log n)</annotation></semantics></math>')


def _page(formula: str, extra: str = "") -> bytes:
    return (f"<html><body><article><h1>Sorting</h1><p>{BEFORE}{formula}{AFTER}</p>{extra}"
            "<p>That bound follows from counting the leaves of a decision tree, since any comparison sort must "
            "tell all orderings apart.</p></article></body></html>").encode()


@pytest.mark.parametrize("formula,shown", [
    (MATHML_TEX, "$O(n \\log n)$"),  # MathML with its TeX annotation
    ('<math alttext="O(n \\log n)"><mi>O</mi></math>', "$O(n \\log n)$"),  # its alttext
    ('<math><mi>O</mi><mo>(</mo><mi>n</mi><mi>log</mi><mi>n</mi><mo>)</mo></math>', "$O(n\\log n)$"),  # converted
    ('<span class="katex"><span class="katex-mathml">' + MATHML_TEX + '</span><span class="katex-html" '
     'aria-hidden="true"><span class="mord">O</span><span class="mopen">(</span><span>n</span></span></span>',
     "$O(n \\log n)$"),  # KaTeX: the TeX once, not its drawn spans too
    ('<span class="MathJax_Preview">O(n log n)</span><script type="math/tex">O(n \\log n)</script>',
     "$O(n \\log n)$"),  # MathJax 2's source, not its preview
    ('<span class="MathJax" id="MathJax-Element-1-Frame"><nobr><span>O(nlogn)</span></nobr></span>'
     '<script type="math/tex" id="MathJax-Element-1">O(n \\log n)</script>', "$O(n \\log n)$"),  # nor its frame
])
def test_an_inline_formula_reads_in_its_place_in_the_sentence(formula, shown):
    result = clean_html(_page(formula))
    assert result.ok
    assert f"{BEFORE}{shown}{AFTER}" in result.plain.split("\n")
    assert f"{BEFORE}{shown}{AFTER}" in result.cleaneval


def test_display_math_is_a_line_of_its_own_between_dollar_pairs():
    # (inside a paragraph, as MathJax pages put it; a formula standing alone between paragraphs is labelled by
    # the CRF, whose training pages hold no formula, and it often calls such a short line boilerplate)
    display = ('<p><math display="block"><semantics><mi>x</mi><annotation encoding="application/x-tex">'
               '\\sum_{i=1}^n i = \\frac{n(n+1)}{2}</annotation></semantics></math>'
               '<script type="math/tex; mode=display">T(n) = 2T(n/2) + n</script></p>')
    lines = clean_html(_page(MATHML_TEX, display)).plain.split("\n")
    assert "$$\\sum_{i=1}^n i = \\frac{n(n+1)}{2}$$" in lines and "$$T(n) = 2T(n/2) + n$$" in lines


def test_tex_already_in_the_text_and_other_scripts_are_left_as_they_were():
    result = clean_html(_page("$O(n \\log n)$", '<script>var x = "$not shown$";</script>'))
    assert f"{BEFORE}$O(n \\log n)${AFTER}" in result.plain.split("\n")
    assert "not shown" not in result.plain
    # a formula with nothing to read is a box between words, as before
    assert f"{BEFORE}{AFTER.lstrip()}" in clean_html(_page("<math></math>")).plain.split("\n")


def test_the_command_line_keeps_the_formula():
    out = subprocess.run([sys.executable, "-m", "cleaner.tools.cli", "clean", "-", "--format", "txt"],
                         input=_page(MATHML_TEX), capture_output=True, check=True).stdout.decode()
    assert f"{BEFORE}$O(n \\log n)${AFTER}" in out.split("\n")


# MathML with no TeX beside it, in the shapes pages write it (hand-written as MDN teaches it, MathJax 3's assistive
# copy, editors' exports): its presentation elements converted (cleaner.page.math.mathml_tex).
QUADRATIC = ('<math display="block"><mrow><mi>x</mi><mo>=</mo><mfrac><mrow><mo form="prefix">&minus;</mo><mi>b</mi>'
             '<mo>&PlusMinus;</mo><msqrt><msup><mi>b</mi><mn>2</mn></msup><mo>&minus;</mo><mn>4</mn>'
             '<mo>&InvisibleTimes;</mo><mi>a</mi><mo>&InvisibleTimes;</mo><mi>c</mi></msqrt></mrow><mrow><mn>2</mn>'
             '<mo>&InvisibleTimes;</mo><mi>a</mi></mrow></mfrac></mrow></math>')


@pytest.mark.parametrize("mathml,tex", [
    (QUADRATIC, "x=\\frac{-b\\pm\\sqrt{b^{2}-4ac}}{2a}"),
    # a sum with its limits, a fraction over a power
    ('<math><munderover><mo>&#x2211;</mo><mrow><mi>n</mi><mo>=</mo><mn>1</mn></mrow><mi>&#x221E;</mi></munderover>'
     '<mfrac><mn>1</mn><msup><mi>n</mi><mn>2</mn></msup></mfrac><mo>=</mo><mfrac><msup><mi>&#x3C0;</mi><mn>2</mn>'
     '</msup><mn>6</mn></mfrac></math>', "\\sum_{n=1}^{\\infty}\\frac{1}{n^{2}}=\\frac{\\pi^{2}}{6}"),
    # a limit under its operator, a function applied, a relation
    ('<math><munder><mo movablelimits="true">lim</mo><mrow><mi>x</mi><mo>&#x2192;</mo><mn>0</mn></mrow></munder>'
     '<mfrac><mrow><mi>sin</mi><mo>&#x2061;</mo><mi>x</mi></mrow><mi>x</mi></mfrac><mo>=</mo><mn>1</mn></math>',
     "\\lim_{x\\to0}\\frac{\\sin x}{x}=1"),
    # a matrix between fences (mfenced, and <mo> fences in a row), a cases table
    ('<math><mi>A</mi><mo>=</mo><mfenced open="[" close="]"><mtable><mtr><mtd><mi>a</mi></mtd><mtd><mi>b</mi>'
     '</mtd></mtr><mtr><mtd><mi>c</mi></mtd><mtd><mi>d</mi></mtd></mtr></mtable></mfenced></math>',
     "A=\\begin{bmatrix}a & b \\\\ c & d\\end{bmatrix}"),
    ('<math><mrow><mo>(</mo><mtable><mtr><mtd><mn>1</mn></mtd><mtd><mn>0</mn></mtd></mtr><mtr><mtd><mn>0</mn></mtd>'
     '<mtd><mn>1</mn></mtd></mtr></mtable><mo>)</mo></mrow></math>',
     "\\begin{pmatrix}1 & 0 \\\\ 0 & 1\\end{pmatrix}"),
    ('<math><mrow><mo>|</mo><mi>x</mi><mo>|</mo><mo>=</mo><mrow><mo>{</mo><mtable><mtr><mtd><mi>x</mi></mtd><mtd>'
     '<mtext>if&#xA0;</mtext><mi>x</mi><mo>&#x2265;</mo><mn>0</mn></mtd></mtr><mtr><mtd><mo>&#x2212;</mo><mi>x</mi>'
     '</mtd><mtd><mtext>otherwise</mtext></mtd></mtr></mtable></mrow></mrow></math>',
     "|x|=\\begin{cases}x & \\text{if }x\\geq0 \\\\ -x & \\text{otherwise}\\end{cases}"),
    # roots, an integral with its bounds, a space, a double-struck set, accents and a prime
    ('<math><mroot><mi>x</mi><mn>3</mn></mroot><mo>+</mo><msubsup><mo>&#x222B;</mo><mn>0</mn><mn>1</mn></msubsup>'
     '<msup><mi>t</mi><mn>2</mn></msup><mspace width="0.167em"/><mi>d</mi><mi>t</mi><mo>,</mo><mi>x</mi><mo>&#x2208;'
     '</mo><mi mathvariant="double-struck">R</mi><mo>,</mo><mover accent="true"><mi>v</mi><mo>&#x2192;</mo></mover>'
     '<mo>,</mo><mover><mi>x</mi><mo>&#xAF;</mo></mover><mo>,</mo><msup><mi>f</mi><mo>&#x2032;</mo></msup></math>',
     "\\sqrt[3]{x}+\\int_{0}^{1}t^{2}\\,dt,x\\in\\mathbb{R},\\vec{v},\\bar{x},f'"),
    # a base of several elements in braces, Greek letters, a binomial (no bar), a multi-letter name
    ('<math><msup><mrow><mo>(</mo><mi>&#x3B1;</mi><mo>+</mo><mi>&#x3B2;</mi><mo>)</mo></mrow><mi>n</mi></msup><mo>=</mo>'
     '<mrow><mo>(</mo><mfrac linethickness="0"><mi>n</mi><mi>k</mi></mfrac><mo>)</mo></mrow><mi>Var</mi></math>',
     "{(\\alpha+\\beta)}^{n}=({n \\atop k})\\mathrm{Var}"),
    # tensor indices, and a deprecated <mfenced> of arguments
    ('<math><mmultiscripts><mi>R</mi><mi>i</mi><none/><mprescripts/><mi>k</mi><none/></mmultiscripts>'
     '<mi>f</mi><mfenced><mi>x</mi><mi>y</mi></mfenced></math>', "{}_{k}R_{i}f(x,y)"),
])
def test_mathml_without_tex_is_converted(mathml, tex):
    node = LexborHTMLParser(f"<p>{mathml}</p>").css_first("math")
    assert mathml_tex(node) == tex
    display = "display=\"block\"" in mathml
    assert math_block(node) == ((f"$${tex}$$" if display else f"${tex}$"), display)


def test_tex_special_characters_and_text_are_escaped():
    node = LexborHTMLParser("<p><math><mi>%</mi><mo>{</mo><mtext>50% of {x}_1</mtext><mo>}</mo></math></p>"
                            ).css_first("math")
    assert mathml_tex(node) == "\\%\\{\\text{50\\% of \\{x\\}\\_1}\\}"


def test_mathjax3_assistive_mathml_reads_as_tex_in_text_and_markdown():
    # MathJax 3 draws the formula with empty elements and CSS glyphs, and puts the MathML beside it for screen
    # readers, without TeX: the sentence has the formula once, as TeX, in the text and in the Markdown.
    formula = ('<mjx-container class="MathJax CtxtMenu_Attached_0" jax="CHTML"><mjx-math class="MJX-TEX" '
               'aria-hidden="true"><mjx-mi class="mjx-i"><mjx-c class="mjx-c1D442 TEX-I"></mjx-c></mjx-mi>'
               '</mjx-math><mjx-assistive-mml unselectable="on" display="inline"><math><mi>O</mi><mo stretchy="false">'
               '(</mo><mi>n</mi><mi>log</mi><mo>&#x2061;</mo><mi>n</mi><mo stretchy="false">)</mo></math>'
               '</mjx-assistive-mml></mjx-container>')
    result = clean_html(_page(formula), markdown=True)
    line = f"{BEFORE}$O(n\\log n)${AFTER}"
    assert line in result.plain.split("\n") and line in result.markdown.split("\n\n")


def test_a_formula_nested_past_the_depth_limit_is_read_as_its_characters():
    deep = "<mrow>" * 300 + "<mi>x</mi><mo>+</mo><mn>1</mn>" + "</mrow>" * 300
    node = LexborHTMLParser(f"<p><math>{deep}</math></p>").css_first("math")
    assert mathml_tex(node) == "x+1"
