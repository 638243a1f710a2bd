"""Formulas a reader sees stay in the text (cleaner.page.math): MathML, KaTeX and MathJax kept as TeX.

Before, <math> and MathJax's <script type="math/tex"> were dropped with their content and the formula vanished
without a trace ("Both cost comparisons").
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from cleaner.api import clean_html

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
    ('<math><mi>O</mi><mo>(</mo><mi>n</mi><mi>log</mi><mi>n</mi><mo>)</mo></math>', "O(n log n)"),  # its text
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
