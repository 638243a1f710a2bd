#!/usr/bin/env python
"""What a compiled walk over Lexbor's own tree costs: the floor of a segmenter written in Cython.

    .venv/bin/python scripts/bench_lexbor_walk.py [--every 5] [--rounds 3]

Issue "A page in 2 ms" plans one compiled pass from bytes to labels over the tree that selectolax's Lexbor
parses. This script measures that option before it is built: it compiles (in a temporary folder, with Cython
and a C compiler) a walk that `cimport`s selectolax's own `lexbor.pxd` (shipped in its wheel) and reads,
through the Lexbor headers that selectolax's sdist vendors (`pip download --no-binary`), what a segmenter
reads of every node: its type and tag id, the links to its child, sibling and parent, a text node's bytes and
an element's attribute values. It calls no Lexbor function (struct fields only), so it needs no symbol of
selectolax's extension at link time. It then times, per wcxb page, by wall clock in a quiet loop (medians,
rounds alternated): Lexbor's parse alone, the parse and the compiled walk, and today's segmentation
(cleaner.page.segment.segment_blocks, mypyc over selectolax's Python node API), and checks that the walk counts
the elements and text nodes that selectolax's `traverse()` finds. Figures: docs/speed.md, stop 47.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WALK_PYX = r'''
# cython: language_level=3, boundscheck=False, wraparound=False
from libc.stdint cimport uintptr_t
from selectolax.lexbor cimport LexborHTMLParser, lxb_dom_node_t, lexbor_str_t

cdef extern from "lexbor/dom/interfaces/character_data.h" nogil:
    ctypedef struct lxb_dom_character_data_t:
        lxb_dom_node_t node
        lexbor_str_t data

cdef extern from "lexbor/dom/interfaces/element.h" nogil:
    ctypedef struct lxb_dom_attr_t
    ctypedef struct lxb_dom_element_t:
        lxb_dom_node_t node
        lxb_dom_attr_t *first_attr

cdef extern from "lexbor/dom/interfaces/attr.h" nogil:
    ctypedef struct lxb_dom_attr_t:
        lxb_dom_node_t node
        uintptr_t upper_name
        uintptr_t qualified_name
        lexbor_str_t *value
        lxb_dom_element_t *owner
        lxb_dom_attr_t *next

def walk(LexborHTMLParser parser):
    """(elements, text nodes, text bytes, attributes, attribute bytes), in document order."""
    cdef lxb_dom_node_t *root = <lxb_dom_node_t *> parser.document
    cdef lxb_dom_node_t *node = root.first_child
    cdef Py_ssize_t elements = 0, texts = 0, text_bytes = 0, attrs = 0, attr_bytes = 0
    cdef lxb_dom_attr_t *attr
    while node != NULL:
        if node.type == 1:  # an element
            elements += 1
            attr = (<lxb_dom_element_t *> node).first_attr
            while attr != NULL:
                attrs += 1
                if attr.value != NULL:
                    attr_bytes += attr.value.length
                attr = attr.next
        elif node.type == 3:  # a text node
            texts += 1
            text_bytes += (<lxb_dom_character_data_t *> node).data.length
        if node.first_child != NULL:
            node = node.first_child
        else:
            while node != NULL and node.next == NULL:
                node = node.parent
                if node == root:
                    node = NULL
            if node != NULL:
                node = node.next
    return elements, texts, text_bytes, attrs, attr_bytes
'''

SETUP_PY = r'''
import os, sys, selectolax
from setuptools import Extension, setup
from Cython.Build import cythonize
headers = sys.argv.pop(1)
site = os.path.dirname(os.path.dirname(selectolax.__file__))
setup(ext_modules=cythonize([Extension("lexbor_walk", ["lexbor_walk.pyx"], include_dirs=[headers],
                                       extra_compile_args=["-O2"])], include_path=[site], quiet=True),
      script_args=["build_ext", "--inplace"])
'''


def build_walk(tmp: Path):
    """Compile the walk against the Lexbor headers of the installed selectolax's sdist; import it."""
    import selectolax

    version = selectolax.__version__
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                    f"selectolax=={version}", "-d", str(tmp)], check=True)
    sdist = next(tmp.glob("selectolax-*.tar.gz"))
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp, filter="data")
    headers = tmp / f"selectolax-{version}" / "lexbor" / "source"
    (tmp / "lexbor_walk.pyx").write_text(WALK_PYX)
    (tmp / "setup.py").write_text(SETUP_PY)
    subprocess.run([sys.executable, "setup.py", str(headers)], cwd=tmp, check=True, capture_output=True)
    sys.path.insert(0, str(tmp))
    return importlib.import_module("lexbor_walk")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--every", type=int, default=5, help="every N-th wcxb page")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)

    from selectolax.lexbor import LexborHTMLParser

    from cleaner.config import load_config
    from cleaner.gold.data import find_pages
    from cleaner.page.decode import decode_html
    from cleaner.page.segment import segment_blocks

    config = load_config()
    texts = [decode_html(p.read_html()).text for p in find_pages(args.data, ["wcxb"])[:: args.every]]
    with tempfile.TemporaryDirectory(prefix="lexbor-walk-") as tmp:
        walk = build_walk(Path(tmp)).walk
        for text in texts:  # the walk sees what selectolax's own traversal sees
            parser = LexborHTMLParser(text)
            nodes = list(parser.root.traverse(include_text=True)) if parser.root is not None else []
            elements = sum(1 for n in nodes if n.tag and n.tag[0] not in "-!")
            text_nodes = sum(1 for n in nodes if n.tag == "-text")
            got = walk(parser)
            assert got[:2] == (elements, text_nodes), (got, elements, text_nodes)
        runs = {"parse": lambda t: LexborHTMLParser(t),
                "parse + compiled walk": lambda t: walk(LexborHTMLParser(t)),
                "segment_blocks today (parse + walk)": lambda t: segment_blocks(t, config)}
        medians: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, run in runs.items():
                times = []
                for text in texts:
                    t0 = time.perf_counter()
                    run(text)
                    times.append((time.perf_counter() - t0) * 1000)
                medians[name].append(statistics.median(times))
    print(f"{len(texts)} wcxb pages, wall ms per page (median over pages, per round; median of rounds)")
    for name, values in medians.items():
        print(f"| {name} | {' / '.join(f'{v:.2f}' for v in values)} | {statistics.median(values):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
