"""Jobs: long-running work driven headlessly -- rendering a project into the audio
cache (``render``), exporting chapters (``export``), opening a manuscript's project
(``session``) and running engines in child processes (``isolation``). The CLI calls
these directly; the GUI runs them in worker threads. Nothing here prints or imports Qt.
"""
