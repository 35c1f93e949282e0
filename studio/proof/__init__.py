"""Proof-listening: every rendered sentence heard back by a speech recogniser and checked.

Why a package of its own, between the project and the jobs layers: it reads the
project's audio and text (and the engine's phonemizer for a phonetic comparison),
and the jobs above it (render, export) use its verdicts. It is the only place that
imports faster-whisper / CTranslate2, and only inside the functions that load a
model, so ``studio --help`` and every other command stay free of them.

Modules: :mod:`.model` (which recogniser, where its files are), :mod:`.words`
(normalised expected and heard words, phonetic closeness), :mod:`.listen` (one
encoder pass per ~28 s of audio: free transcription and forced scoring of the
expected words), :mod:`.signal` (clipping, noise bursts, silences, cut-off ends),
:mod:`.judge` (flags with a severity and a reason), :mod:`.pronounce` (a heteronym
read against its context, without listening), :mod:`.download` (a named bigger model
fetched once into the cache), :mod:`.recording` (a whole recording aligned to its text),
:mod:`.sphinx` (pocketsphinx: the cheap first pass's forced alignment, the intelligibility
measure's transcription), :mod:`.second` (the second listener on what Whisper flagged).
pocketsphinx too is imported only here.
"""
