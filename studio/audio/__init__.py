"""Audio layer: PCM helpers, chapter assembly, resampling and file writers.

Pure numpy plus the standard library and, for MP3, the system ``ffmpeg``. Nothing
here knows about projects or engines, so the GUI, the CLI and tests can all use it.
"""
