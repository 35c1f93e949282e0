"""Measurement helpers for presets: quality of an accelerated voice against its FP32 reference.

Kept free of engine imports so tests and benchmark scripts can use the metrics on any audio.
"""
