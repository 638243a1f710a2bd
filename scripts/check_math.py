#!/usr/bin/env python
"""MathML without TeX, converted back to TeX (issue 42, item 2): measured by a round trip through KaTeX.

    .venv/bin/python scripts/check_math.py [--node-modules DIR] [--show 10]

None of the shared pages holds MathML (docs/fidelity.md, "Formulas"), so the formulas are made: each TeX formula
of FORMULAS (common textbook formulas: fractions, roots, scripts, sums and integrals with limits, accents, matrices,
cases, fences, Greek letters, operators) is rendered to MathML by KaTeX, as a page would carry it; its TeX
annotation is removed (MathJax 3's assistive MathML and hand-written MathML carry none), and
cleaner.page.math.math_block reads it. That TeX is rendered by KaTeX again, and the two MathML trees compared, the
`<mrow>` grouping and every attribute but `mathvariant` aside: the same tree is the same formula drawn. Reported:
formulas read as TeX at all, read as TeX KaTeX accepts, and drawn the same; before this converter the text of the
token elements was all a formula without annotation gave (never TeX).

Then the same formulas in a page, each in a sentence of its own paragraph, as KaTeX publishes them (its MathML
with the TeX annotation, and the formula drawn in spans beside it) and as MathML alone: each system's Markdown
(this project: `clean_html(markdown=True)`; trafilatura: `extract(output_format="markdown")`) keeps a formula when
one of its `$...$` spans is TeX that KaTeX draws as the page's MathML.

Needs Node.js and KaTeX (`npm install katex` in some folder, given as --node-modules; not a dependency of the
project).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from cleaner.page.math import math_block  # noqa: E402

FORMULAS = [
    r"x = \frac{-b \pm \sqrt{b^2 - 4ac}}{2a}",
    r"a^2 + b^2 = c^2",
    r"e^{i\pi} + 1 = 0",
    r"\int_{-\infty}^{\infty} e^{-x^2} \, dx = \sqrt{\pi}",
    r"P(A \mid B) = \frac{P(B \mid A) P(A)}{P(B)}",
    r"(x + y)^n = \sum_{k=0}^{n} \binom{n}{k} x^k y^{n-k}",
    r"f(x) = \sum_{n=0}^{\infty} \frac{f^{(n)}(a)}{n!} (x - a)^n",
    r"f'(x) = \lim_{h \to 0} \frac{f(x + h) - f(x)}{h}",
    r"\hat{f}(\xi) = \int_{-\infty}^{\infty} f(x) e^{-2\pi i x \xi} \, dx",
    r"\left| \langle u, v \rangle \right| \leq \|u\| \, \|v\|",
    r"n! \sim \sqrt{2 \pi n} \left( \frac{n}{e} \right)^n",
    r"\nabla \cdot \mathbf{E} = \frac{\rho}{\varepsilon_0}",
    r"i \hbar \frac{\partial}{\partial t} \Psi = \hat{H} \Psi",
    r"f(x) = \frac{1}{\sigma \sqrt{2\pi}} e^{-\frac{1}{2} \left( \frac{x - \mu}{\sigma} \right)^2}",
    r"\det \begin{pmatrix} a & b \\ c & d \end{pmatrix} = ad - bc",
    r"\mathrm{softmax}(z)_i = \frac{e^{z_i}}{\sum_{j=1}^{K} e^{z_j}}",
    r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\left( \frac{Q K^T}{\sqrt{d_k}} \right) V",
    r"L = -\sum_{i=1}^{N} y_i \log \hat{y}_i",
    r"T(n) = 2 T(n/2) + O(n)",
    r"\sum_{k=0}^{\infty} r^k = \frac{1}{1 - r}",
    r"\zeta(s) = \sum_{n=1}^{\infty} \frac{1}{n^s} = \prod_{p} \frac{1}{1 - p^{-s}}",
    r"\oint_{\partial \Sigma} \mathbf{F} \cdot d\mathbf{r} = "
    r"\iint_{\Sigma} (\nabla \times \mathbf{F}) \cdot d\mathbf{S}",
    r"A = \{ x \in \mathbb{R} : x^2 < 2 \}",
    r"|x| = \begin{cases} x & \text{if } x \geq 0 \\ -x & \text{otherwise} \end{cases}",
    r"\vec{v} = \bar{x} + \overline{AB}",
    r"\|x\|_2 = \sqrt{\sum_{i=1}^{n} x_i^2}",
    r"\lfloor x \rfloor \leq x < \lceil x \rceil + 1",
    r"\forall \varepsilon > 0 \; \exists \delta > 0",
    r"\theta \leftarrow \theta - \eta \nabla_\theta L(\theta)",
    r"\mathbb{E}[X] = \sum_{x} x \, p(x)",
    r"\mathrm{Var}(X) = \mathbb{E}[X^2] - \mathbb{E}[X]^2",
    r"\begin{bmatrix} 1 & 0 \\ 0 & 1 \end{bmatrix} \begin{bmatrix} x \\ y \end{bmatrix}",
    r"\frac{\partial^2 u}{\partial t^2} = c^2 \nabla^2 u",
    r"\sqrt[3]{x^3 + y^3}",
    r"\lim_{n \to \infty} \left( 1 + \frac{1}{n} \right)^n = e",
    r"\sin^2 \alpha + \cos^2 \alpha = 1",
    r"\log_b(xy) = \log_b x + \log_b y",
    r"x_{i,j}^{(t+1)} = x_{i,j}^{(t)} + \Delta t",
    r"\max_{x \in X} f(x) \geq \min_{y \in Y} g(y)",
    r"\Gamma(z) = \int_0^\infty t^{z-1} e^{-t} \, dt",
    r"F_n = F_{n-1} + F_{n-2}",
    r"\pi(x) \sim \frac{x}{\ln x}",
    r"\overbrace{1 + 2 + \cdots + n}^{n \text{ terms}} = \frac{n(n+1)}{2}",
    r"a \equiv b \pmod{n}",
    r"\dot{x} = A x + B u",
    r"\binom{n}{k} = \frac{n!}{k!(n-k)!}",
    r"\int_a^b f'(x) \, dx = f(b) - f(a)",
    r"\tilde{p}(x) \propto \exp(-E(x))",
    r"\bigcup_{i=1}^{n} A_i \subseteq \bigcap_{j} B_j",
    r"\frac{d}{dx} \left[ \int_a^x f(t) \, dt \right] = f(x)",
]

_RENDER = """
const katex = require("katex");
const out = JSON.parse(require("fs").readFileSync(0, "utf8")).map(tex => {
  try { return katex.renderToString(tex, {output: "mathml", throwOnError: true}); }
  catch (e) { return null; }
});
process.stdout.write(JSON.stringify(out));
"""


def katex_mathml(formulas: list[str], node_modules: str) -> list[str | None]:
    """KaTeX's MathML of each formula (None where KaTeX refuses it)."""
    run = subprocess.run(["node", "-e", _RENDER], input=json.dumps(formulas), capture_output=True, text=True,
                         env={"NODE_PATH": node_modules, "PATH": "/usr/bin:/bin:/usr/local/bin"}, check=True)
    return json.loads(run.stdout)


def without_annotation(mathml: str) -> str:
    return re.sub(r"<annotation\b.*?</annotation>", "", mathml, flags=re.S)


def shape(mathml: str) -> list[str]:
    """A MathML tree as what is drawn: elements and token texts in order, `<mrow>`/`<semantics>` grouping and
    every attribute but `mathvariant` aside."""
    root = LexborHTMLParser(f"<p>{without_annotation(mathml)}</p>").css_first("math")
    out: list[str] = []

    def walk(node) -> None:
        child = node.child
        while child is not None:
            tag = child.tag
            if tag == "-text":
                text = (child.text_content or "").strip()
                if text:
                    out.append(repr(text))
            elif tag and tag[0] not in "-!":
                if tag in ("mrow", "semantics"):
                    walk(child)
                else:
                    variant = (child.attributes or {}).get("mathvariant") or ""
                    out.append(f"<{tag} {variant}>".replace(" >", ">"))
                    walk(child)
                    out.append(f"</{tag}>")
            child = child.next

    if root is not None:
        walk(root)
    return out


SENTENCE = ("The formula {} is one of the results a student meets in the first years of a course in mathematics, "
            "physics or computer science, and it is written here in a sentence of its own.")


def page_of(formulas_html: list[str]) -> str:
    paragraphs = "".join(f"<p>{SENTENCE.format(f)}</p>" for f in formulas_html)
    return (f"<html><head><title>Formulas</title></head><body><article><h1>Formulas</h1>{paragraphs}</article>"
            "</body></html>")


def kept_in_pages(pages: list[str], node_modules: str) -> dict[str, dict[str, int]]:
    """{page kind: {system: formulas kept as TeX drawn the same}} (module docstring)."""
    import trafilatura

    from cleaner.api import clean_html

    full = katex_mathml_html(FORMULAS, node_modules)
    kinds = {"KaTeX as published (TeX annotation)": full, "MathML alone": [without_annotation(p) for p in pages]}
    shapes = [shape(p) for p in pages]
    out: dict[str, dict[str, int]] = {}
    for kind, formulas_html in kinds.items():
        html = page_of(formulas_html)
        outputs = {"webcleaner": clean_html(html.encode(), markdown=True).markdown or "",
                   "trafilatura": trafilatura.extract(html, output_format="markdown") or ""}
        out[kind] = {}
        for system, markdown in outputs.items():
            spans = re.findall(r"\$\$(.+?)\$\$|\$(.+?)\$", markdown)
            tex = [a or b for a, b in spans]
            drawn = katex_mathml(tex, node_modules) if tex else []
            found = {tuple(shape(m)) for m in drawn if m is not None}
            out[kind][system] = sum(tuple(s) in found for s in shapes)
    return out


def katex_mathml_html(formulas: list[str], node_modules: str) -> list[str]:
    """KaTeX's whole output of each formula: its MathML (with the TeX annotation) and its drawn spans."""
    script = _RENDER.replace('{output: "mathml", throwOnError: true}', '{throwOnError: true}')
    run = subprocess.run(["node", "-e", script], input=json.dumps(formulas), capture_output=True, text=True,
                         env={"NODE_PATH": node_modules, "PATH": "/usr/bin:/bin:/usr/local/bin"}, check=True)
    return json.loads(run.stdout)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--node-modules", required=True, help="a node_modules folder holding katex")
    ap.add_argument("--show", type=int, default=10, help="list this many formulas not drawn the same")
    args = ap.parse_args(argv)
    pages = katex_mathml(FORMULAS, args.node_modules)
    read: list[str] = []
    for tex, mathml in zip(FORMULAS, pages):
        if mathml is None:
            raise SystemExit(f"KaTeX refuses a formula of the list: {tex}")
        node = LexborHTMLParser(f"<p>{without_annotation(mathml)}</p>").css_first("math")
        block = math_block(node)
        read.append(block[0].strip("$") if block and block[0].startswith("$") else "")
    again = katex_mathml([r or "" for r in read], args.node_modules)
    as_tex = sum(bool(r) for r in read)
    accepted = sum(bool(r) and m is not None for r, m in zip(read, again))
    same = [bool(r) and m is not None and shape(m) == shape(p) for r, m, p in zip(read, again, pages)]
    n = len(FORMULAS)
    print(f"{n} formulas (KaTeX's MathML, TeX annotation removed): read as TeX {as_tex} ({as_tex / n:.0%}), TeX "
          f"KaTeX accepts {accepted} ({accepted / n:.0%}), drawn the same as the page's MathML {sum(same)} "
          f"({sum(same) / n:.0%})")
    shown = 0
    for tex, r, ok in zip(FORMULAS, read, same):
        if not ok and shown < args.show:
            print(f"  source: {tex}\n  read:   {r}")
            shown += 1
    print("\nThe formulas in a page, one a paragraph: kept as TeX drawn the same, of", n)
    print("| page | this project | trafilatura |\n|---|---|---|")
    for kind, by_system in kept_in_pages(pages, args.node_modules).items():
        print(f"| {kind} | {by_system['webcleaner']} | {by_system['trafilatura']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
