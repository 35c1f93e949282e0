"""Mathematics said in words: MathML (:mod:`.speech`) and LaTeX in running text (:mod:`.latex`),
by reading tables per language (``rules/<language>.json``); docs/mathematics.md lists the readings."""
