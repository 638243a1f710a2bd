"""The lookup tables' base, compiled (cleaner/page/compiled_tables.pyx), against its readable reference, `dict`: a
subclass with `__missing__` gives the same values, errors and pickles on both, and the compiled one is what the
feature names, cue caches and attribute ids are built on."""

from __future__ import annotations

import copy
import pickle

import pytest

from cleaner.label.crf import AttributeIds, ConjoinedIds
from cleaner.page.cues import CueCache
from cleaner.page.feature_names import BinTable, PrefixCache
from cleaner.page.lookup_table import LookupTable

compiled = pytest.importorskip("cleaner.page.compiled_tables", reason="not built (scripts/build_native.py)")


def _tables():
    for base in (dict, compiled.LookupTable):
        class Squares(base):  # type: ignore[valid-type, misc]
            __slots__ = ("misses",)

            def __init__(self):
                super().__init__({1: 1})
                self.misses = 0

            def __missing__(self, key):
                if key < 0:
                    raise KeyError(key)
                self.misses += 1
                self[key] = key * key
                return key * key

        yield Squares()


def test_a_subclass_gives_the_same_values_misses_and_errors_on_both():
    got = []
    for table in _tables():
        values = [table[k] for k in (1, 2, 3, 2, 1)]
        errors = []
        for bad in (-1, [1]):
            try:
                table[bad]
            except (KeyError, TypeError) as exc:
                errors.append((type(exc), exc.args))
        got.append((values, table.misses, errors, dict(table), table.get(5), 3 in table, 7 in table, len(table)))
    assert got[0] == got[1]


def test_without_missing_a_miss_is_a_key_error():
    class Plain(compiled.LookupTable):
        pass
    with pytest.raises(KeyError):
        Plain()["absent"]


def test_a_table_pickles_and_copies_with_its_entries_and_attributes():
    table = PrefixCache("idclass.")
    assert table["nav"] == "idclass.nav"
    for twin in (pickle.loads(pickle.dumps(table)), copy.deepcopy(table)):
        assert type(twin) is PrefixCache and dict(twin) == {"nav": "idclass.nav"} and twin.prefix == "idclass."
        assert twin["menu"] == "idclass.menu"


def test_the_tables_are_built_on_the_compiled_base():
    assert LookupTable is compiled.LookupTable
    for table in (BinTable, PrefixCache, CueCache, AttributeIds, ConjoinedIds):
        assert issubclass(table, compiled.LookupTable), table
