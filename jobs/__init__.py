"""The Spark job over WARC files (jobs/clean_warc.py) and its helpers.

Nothing in cleaner/ imports from here: the cleaning core stays free of Spark.
"""
