"""The page's path, the lowest layer above the shared modules: bytes -> checked -> decoded (decode, charsets)
-> parsed and cut into blocks (segment, hidden_text; pipeline.read_page is the one way in) -> the blocks' text
(text), page type (page_type), cues (cues) and feature dicts (features).

Imports only the shared modules (cleaner.config, cleaner.labels, ...). The per-block stages named in
cleaner.NATIVE_MODULES run compiled when built (scripts/build_native.py): their build, `cleaner/_native/page/`,
goes in front of this package's sources here.
"""

from __future__ import annotations

from .. import use_native_build

use_native_build(__name__, __path__)  # noqa: F821 (the package's __path__)
