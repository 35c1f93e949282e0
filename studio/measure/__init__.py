"""Measuring presets on this machine (`studio bench`, the soak): speed, memory and quality of an
accelerated voice against its FP32 reference. The scripts under the top-level ``bench/`` call it."""
