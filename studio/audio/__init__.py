"""Audio layer: PCM helpers, chapter assembly, resampling and file writers.

Pure numpy plus the standard library and, for MP3, M4B and Opus, ``ffmpeg``
(:mod:`studio.audio.ffmpeg`: the system's, or the one the imageio-ffmpeg package
ships). Nothing here knows about projects or engines, so the GUI, the CLI and tests can all use it.
"""
