"""Rendering a project: its pending sentences spoken into the audio cache, committed one by one,
and proof-listening with automatic new takes. The CLI calls this directly; the desktop runs it
on its model worker. Nothing here prints or imports Qt."""
