"""Manuscripts in, a frozen :class:`~studio.core.types.Book` out.

Import from the modules themselves: ``importer.load_manuscript``, ``inspect.inspect_book``,
``language`` (detection and overrides), ``segment`` (normalisation and the one sentence
splitter), one module per format in ``formats`` (txt, md, html, epub, docx, pdf; the
importer picks one from ``formats.BY_SUFFIX``). The package imports
nothing, so the engine layer can use the sentence splitter on a machine without the
document importers' libraries (lxml, python-docx, pdfminer, lingua).
"""
