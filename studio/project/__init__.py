"""Projects: a folder with ``project.sqlite`` (book, settings, render state) and an
audio cache of every rendered sentence, so renders resume and re-renders reuse.

Nothing is imported here: importing one light module of the package (``settings``) must not
import the store, the cast and the audio cache, which a render's first second needs the CPU for
(its model process starts). Import each name from its own module.
"""
