"""Web page cleaning for corpus building.

Pipeline (one module per stage, plain dataclasses between them):

    decode  -> segment -> features -> model (CRF tag) -> assemble
    bytes      blocks     feature      labels + marginals  CleanEval text + statistics
               dicts

`cleaner.api.clean_html` runs the whole chain on one page and never raises.
`cleaner.gold`/`cleaner.align` turn hand-cleaned gold text into block labels for training,
`cleaner.score` is the project's scorer.
"""

__version__ = "0.1.0"
