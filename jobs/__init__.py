"""The Spark job over WARC files (jobs/clean_warc.py) and its helpers.

Nothing in cleaner/ imports from here: the cleaning core stays free of Spark. (`cleaner.tools.cli` names
`jobs.local_job` as the module of its `clean-warc` command, the job on local processes: jobs/pool.py.)
"""
