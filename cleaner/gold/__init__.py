"""Gold text and the data sets: reading hand-cleaned gold (gold), the shared data sets and their folds (data),
the project's scorer (score), and the alignment of gold text to a page's blocks, which gives the block labels
training learns from (align).

Imports the page's path (cleaner.page) and the shared modules; used by the labellers' training and evaluation.
"""
