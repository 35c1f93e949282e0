"""Delivering the book: chapter files and publish-ready packages assembled from the audio cache,
with credits, the manifest and the proof-listening state."""
