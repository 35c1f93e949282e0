"""Voices and the engines that speak them, behind one small interface (``base``).

Backends never import each other; heavy optional imports (torch, coqui-tts,
tensorrt) happen inside the backend that needs them, so ``import studio.engine``
stays cheap.
"""
