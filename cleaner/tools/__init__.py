"""The top layer, what a user runs: the `cleaner` command line (cli and cli_*), inspect and annotate with its
server, what `cleaner clean` reads and writes (inputs, outputs), the process settings of a cleaning process
(runtime) and the datatrove pipeline step (datatrove). Nothing in cleaner imports it; jobs/ does.
"""
