# cython: language_level=3, auto_pickle=False
"""The base of the lookup tables that name a value once and then look it up (cleaner.page.lookup_table.LookupTable):
a dict whose `table[key]` stays in C in its Python subclasses. Its readable reference is `dict` itself.

Why: CPython cannot give a Python subclass of dict the dict's own subscript, because dict defines `__getitem__` as a
method, not as a slot; every lookup in such a subclass goes through a generic slot that looks `__getitem__` up on the
type and calls it: about 350 instructions, against 60 in a dict. The feature names, cue caches and attribute ids make
10,900 such lookups a page of 2025 (docs/speed.md, stop 54). Here `__getitem__` is a slot of this type, which the
subclasses inherit as it is: a hit is one `PyDict_GetItemWithError`, a miss calls the subclass's `__missing__`, as
dict's subscript does (tests/test_compiled_tables.py).
"""

from cpython.dict cimport PyDict_GetItemWithError
from cpython.ref cimport PyObject


cdef class LookupTable(dict):
    def __getitem__(self, key):
        cdef PyObject *value = PyDict_GetItemWithError(self, key)
        if value is NULL:  # (an error in the key's hash or comparison was raised already, by except? NULL)
            return self.__missing__(key)
        return <object>value

    def __missing__(self, key):
        raise KeyError(key)
