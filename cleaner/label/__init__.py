"""Blocks -> labels: the CRF (crf, crfsuite_file, attribute_codes, crf_model), its model files and packaged
models (model_files, model), the decision from its output (decide), stacking, the annotation conventions
(convention), the segment-marker typer (markers), and the seed systems behind one interface (systems/).

Imports the page's path (cleaner.page), gold (cleaner.gold) and the shared modules, nothing above.
"""
