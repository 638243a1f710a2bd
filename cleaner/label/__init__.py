"""Blocks -> labels: the CRF (crf, crfsuite_file, attribute_codes, crf_model), its model files and packaged
models (model_files, model), the decision from its output (decide), stacking, the annotation conventions
(convention), the segment-marker typer (markers), and the seed systems behind one interface (systems/).
The CRF's inference (chain, compiled as compiled_chain) runs from its build, `cleaner/_native/label/`, when
there is one.

Imports the page's path (cleaner.page), gold (cleaner.gold) and the shared modules, nothing above.
"""

from __future__ import annotations

from .. import use_native_build

use_native_build(__name__, __path__)  # noqa: F821 (the package's __path__): the compiled chain, cleaner/_native/label/
