"""The attribute codes, compiled (cleaner/label/compiled_codes.pyx), against their readable reference
(cleaner.label.crf.encode_attribute_reference, hashlib's BLAKE2b): a model names its attributes by these codes, so one
wrong code is an attribute the model no longer sees."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cleaner.label.crf import encode_attribute, encode_attribute_reference

compiled = pytest.importorskip("cleaner.label.compiled_codes", reason="not built (scripts/build_native.py)")


def test_the_compiled_code_is_blake2b_at_every_length_across_the_block_boundary():
    # one block is 128 bytes: names up to it are hashed in place, longer ones by hashlib
    rng = random.Random(7)
    for length in range(0, 300):
        for alphabet in ("abc=.-|:0123456789", "aé中\U0001f600", "a\ud800b"):  # 1-4 byte UTF-8, a lone surrogate
            name = "".join(rng.choice(alphabet) for _ in range(length))
            assert compiled.attribute_code(name) == encode_attribute_reference(name), (length, name)


@settings(max_examples=500, deadline=None)
@given(name=st.text(max_size=140))
def test_the_compiled_code_is_blake2b_on_generated_names(name):
    assert compiled.attribute_code(name) == encode_attribute_reference(name)


def test_the_label_package_names_attributes_with_the_compiled_code():
    assert encode_attribute is compiled.attribute_code
    code = encode_attribute("idclass.nav")
    assert len(code) == 12 and int(code, 16) >= 0 and code == code.lower()


def test_the_ids_of_an_attribute_and_its_copies_are_the_references():
    """ConjoinedIds names an attribute and its copies under each convention in one compiled call
    (compiled_codes.code_ids): the ids the reference loop looks up, found or not, short names and names past one
    block, ASCII or not."""
    names = ["idclass.nav", "tag.self=main", "idclass.é", "idclass." + "x" * 120, "idclass.\ud800"]
    prefixes = ("main|", "article|", "cleaneval|", "dragnet|", "é" * 3 + "|")
    known = [p + n for n in names for p in ("",) + prefixes][::2]  # every other name in the vocabulary
    index = {encode_attribute_reference(name): k for k, name in enumerate(known, 1)}
    for name in names + ["idclass.unknown"]:
        expected = tuple(index.get(encode_attribute_reference(p + name), 0) for p in ("",) + prefixes)
        assert compiled.code_ids(index, name, prefixes) == expected, name
        assert compiled.code_ids(index, name, ()) == expected[:1]
    assert any(compiled.code_ids(index, name, prefixes).count(0) not in (0, 6) for name in names)
