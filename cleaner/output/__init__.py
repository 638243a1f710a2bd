"""What a cleaned page becomes: labelled blocks -> CleanEval text and statistics (assemble), the corpus columns
(corpus, with langid, dedup and signals), the Parquet schema (schema), and whole-or-nothing file writing (files).

Imports the layers below (cleaner.page, cleaner.gold, cleaner.label) and the shared modules.
"""

from .. import use_native_build

use_native_build(__name__, __path__)  # noqa: F821 (the package's __path__): the compiled markdown, cleaner/_native/output/
