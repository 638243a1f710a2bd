"""LookupTable, the base of the tables that name a value once and then look it up (feature_names.BinTable and
PrefixCache, cues.CueCache, cleaner.label.crf.AttributeIds): a dict with `__missing__`.

Built, it is the type of cleaner/page/compiled_tables.pyx, whose lookups stay in C in a Python subclass (in a
subclass of `dict` itself each lookup first finds `__getitem__` on the type: 10,900 lookups a page, 3 M instructions;
docs/speed.md, stop 54). Without a build it is `dict`, its readable reference, which gives the same results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what mypy and mypyc see: a dict (mypyc then takes the class from this module when it runs)
    class LookupTable(dict[Any, Any]):
        def __missing__(self, key: Any) -> Any: ...
else:
    try:
        from .compiled_tables import LookupTable
    except ImportError:  # not built (or WEBCLEANER_PURE_PYTHON=1): the reference
        LookupTable = dict

__all__ = ["LookupTable"]
