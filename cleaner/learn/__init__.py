"""Users of the whole pipeline to learn and measure: training (train), evaluation figures and reports (evaluate),
the seed systems' page path (systems_clean) and cross-validation (systems_evaluate).

Above cleaner.api; used only by the command line (cleaner.tools) and scripts.
"""
