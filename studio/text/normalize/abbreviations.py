"""Abbreviations and acronyms: the words a narrator says for them.

Why context for some: "St." is "Saint" before a name and "Street" after one, "Dr."
"Doctor" before a name and "Drive" after one, "No." "number" only before a number
("No. 10") and never in "No. That is not it.". Everything else is a table per
language. (Words in capitals, acronyms among them: :mod:`capitals`.)
"""

from __future__ import annotations

import re
from typing import Callable


Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str]]

#: abbreviation (with its period) -> words; matched case-sensitively at word starts
TABLES: dict[str, dict[str, str]] = {
    "en": {
        "Mr.": "Mister", "Mrs.": "Missus", "Ms.": "Mizz", "Messrs.": "Messieurs", "Prof.": "Professor",
        "Gen.": "General", "Col.": "Colonel", "Capt.": "Captain", "Lt.": "Lieutenant", "Sgt.": "Sergeant",
        "Cpl.": "Corporal", "Adm.": "Admiral", "Maj.": "Major", "Rev.": "Reverend", "Hon.": "Honorable",
        "Gov.": "Governor", "Sen.": "Senator", "Rep.": "Representative", "Pres.": "President", "Fr.": "Father",
        "Jr.": "Junior", "Sr.": "Senior", "Bros.": "Brothers", "Inc.": "Incorporated", "Ltd.": "Limited",
        "Corp.": "Corporation", "Co.": "Company", "Ave.": "Avenue", "Blvd.": "Boulevard", "Rd.": "Road",
        "Ln.": "Lane", "Sq.": "Square", "Mt.": "Mount", "Ft.": "Fort", "Pt.": "Point", "vs.": "versus",
        "vs": "versus", "v.": "versus", "e.g.": "for example", "i.e.": "that is", "etc.": "et cetera",
        "cf.": "compare", "approx.": "approximately", "dept.": "department", "Dept.": "Department",
        "est.": "established", "Est.": "Established", "fig.": "figure", "Fig.": "Figure", "vol.": "volume",
        "Vol.": "Volume", "ch.": "chapter", "Ch.": "Chapter", "para.": "paragraph", "misc.": "miscellaneous",
        "a.k.a.": "also known as", "ed.": "edition", "eds.": "editors", "viz.": "namely", "ibid.": "ibidem",
        "Jan.": "January", "Feb.": "February", "Mar.": "March", "Apr.": "April", "Jun.": "June", "Jul.": "July",
        "Aug.": "August", "Sep.": "September", "Sept.": "September", "Oct.": "October", "Nov.": "November",
        "Dec.": "December", "Mon.": "Monday", "Tue.": "Tuesday", "Tues.": "Tuesday", "Wed.": "Wednesday",
        "Thu.": "Thursday", "Thurs.": "Thursday", "Fri.": "Friday", "Sat.": "Saturday",
        "yrs.": "years", "hrs.": "hours", "fn.": "footnote", "fns.": "footnotes", "doz.": "dozen",
        "figs.": "figures", "vols.": "volumes", "chap.": "chapter", "Chap.": "Chapter",
        "Pvt.": "Private", "Cmdr.": "Commander", "Brig.": "Brigadier", "Msgr.": "Monsignor", "Supt.": "Superintendent",
        "U.N.": "U N", "E.U.": "E U", "PhD": "P H D", "PhDs": "P H D's",
        "mins.": "minutes", "min.": "minutes", "sec.": "seconds", "govt.": "government", "intl.": "international",
        "Univ.": "University", "Assn.": "Association", "Ph.D.": "P H D", "M.D.": "M D", "B.A.": "B A", "M.A.": "M A",
        "U.S.": "U S", "U.K.": "U K", "U.S.A.": "U S A", "D.C.": "D C", "A.D.": "A D", "B.C.": "B C",
    },
    "de": {
        "z.B.": "zum Beispiel", "z. B.": "zum Beispiel", "d.h.": "das heißt", "d. h.": "das heißt", "usw.": "und so weiter",
        "Nr.": "Nummer", "Dr.": "Doktor", "Hr.": "Herr", "Hrn.": "Herrn", "Fr.": "Frau", "bzw.": "beziehungsweise",
        "ca.": "circa", "u.a.": "unter anderem", "u. a.": "unter anderem", "St.": "Sankt", "Str.": "Straße",
        "Mio.": "Millionen", "Mrd.": "Milliarden", "Jh.": "Jahrhundert", "evtl.": "eventuell", "ggf.": "gegebenenfalls",
        "Prof.": "Professor", "S.": "Seite", "vgl.": "vergleiche", "inkl.": "inklusive", "Tel.": "Telefon",
        "etc.": "et cetera", "bspw.": "beispielsweise", "v. Chr.": "vor Christus", "n. Chr.": "nach Christus",
        "Abb.": "Abbildung", "Hbf.": "Hauptbahnhof", "z.T.": "zum Teil", "o.ä.": "oder ähnlich", "Std.": "Stunden",
    },
    "fr": {
        "M.": "Monsieur", "MM.": "Messieurs", "Mme": "Madame", "Mmes": "Mesdames", "Mlle": "Mademoiselle",
        "Dr": "Docteur", "Pr": "Professeur", "St": "Saint", "Ste": "Sainte", "av.": "avenue", "bd": "boulevard",
        "etc.": "et cetera", "p. ex.": "par exemple", "c.-à-d.": "c'est-à-dire", "n°": "numéro", "N°": "numéro",
        "env.": "environ", "J.-C.": "Jésus-Christ", "cf.": "confer", "p.": "page", "vol.": "volume", "ch.": "chapitre",
        "Mgr": "Monseigneur", "Me": "Maître", "apr.": "après", "av. J.-C.": "avant Jésus-Christ", "tél.": "téléphone",
    },
    "es": {
        "Sr.": "señor", "Sra.": "señora", "Srta.": "señorita", "Dr.": "doctor", "Dra.": "doctora", "D.": "don",
        "Dña.": "doña", "etc.": "etcétera", "p. ej.": "por ejemplo", "núm.": "número", "nº": "número", "n.º": "número",
        "Ud.": "usted", "Uds.": "ustedes", "Vd.": "usted", "aprox.": "aproximadamente", "Avda.": "avenida", "c/": "calle",
        "pág.": "página", "S.": "San", "Sto.": "Santo", "Sta.": "Santa", "a. C.": "antes de Cristo", "d. C.": "después de Cristo",
        "EE. UU.": "Estados Unidos", "EE.UU.": "Estados Unidos", "tel.": "teléfono", "admón.": "administración",
    },
    "it": {
        "Sig.": "signor", "Sig.ra": "signora", "Sig.na": "signorina", "Dott.": "dottor", "Dott.ssa": "dottoressa",
        "Prof.": "professor", "Prof.ssa": "professoressa", "ecc.": "eccetera", "es.": "per esempio", "n.": "numero",
        "pag.": "pagina", "S.": "San", "ca.": "circa", "sec.": "secolo", "Avv.": "avvocato", "Ing.": "ingegner",
        "Geom.": "geometra", "tel.": "telefono", "p.es.": "per esempio", "a.C.": "avanti Cristo", "d.C.": "dopo Cristo",
        "c.a.": "corrente anno", "Spett.": "spettabile", "vs.": "vostro", "Egr.": "egregio", "pagg.": "pagine",
    },
}
#: capitalised words that start a phrase rather than name a street ("In St. Louis")
_NOT_STREETS = frozenset("The A An In On At Of To From By And Or But For With Near Past Via Into Onto Off Dear".split())


def _place_or_title(m: re.Match[str], place: str, title: str) -> str:
    """"Street"/"Drive" after a street's name or number, else "Saint"/"Doctor" before a name."""
    before, after = m.string[: m.start()], m.string[m.end():]
    prev = re.search(r"(\S+)\s+$", before)
    word = prev.group(1).strip("\"'“”‘’(") if prev else ""
    # the first word of a sentence is capitalised for that, not for being a name
    initial = prev is None or not before[: prev.start()].strip() or bool(re.search(r"[.!?:;]\s*$", before[: prev.start()]))
    end = "." if not after.strip() else ""  # the abbreviation's period also ended the sentence
    if word and word[-1] not in ".,;:!?" and (word[0].isdigit() or (word[0].isupper() and not initial and word not in _NOT_STREETS)):
        return place + end
    nxt = re.match(r"\s+(\S)", after)
    if title == "Doctor" or (nxt and nxt.group(1).isupper()):
        return title + end
    return place + end


def rules(language: str) -> list[Rule]:
    """Abbreviation rules for ``language``: the context rules first, then the table."""
    out: list[Rule] = []
    if language == "en":
        out += [
            # No. 10 / no. 5 / Nos. 3 and 4: a number follows
            (re.compile(r"\b([Nn])os?\.\s?(?=\d|#)"), lambda m: "numbers " if m.group(0)[2] == "s" else "number "),
            (re.compile(r"\b[Nn]o\.\s?(?=[IVXLC]+\b)"), lambda m: "number "),
            # St. / Dr. after a street's name ("Baker St.", "5th St.", "Mulholland Dr.") are
            # Street / Drive; before a name ("St. Brigid", "Dr. Élise Marchand") Saint / Doctor
            (re.compile(r"\bSt\.(?!\w)"), lambda m: _place_or_title(m, "Street", "Saint")),
            (re.compile(r"\bDr\.(?!\w)"), lambda m: _place_or_title(m, "Drive", "Doctor")),
            (re.compile(r"\bpp\.\s?(?=\d)"), lambda m: "pages "),
            (re.compile(r"\bp\.\s?(?=\d)"), lambda m: "page "),
            (re.compile(r"\bc(?:a)?\.\s?(?=\d)"), lambda m: "circa "),
        ]
    table = TABLES.get(language, {})
    if table:
        keys = sorted(table, key=len, reverse=True)
        body = "|".join(re.escape(k).replace(r"\ ", r"\s?") for k in keys)
        lookup = {k.replace(" ", ""): v for k, v in table.items()}

        def expand(m: re.Match[str]) -> str:
            found = m.group(1)
            words = lookup.get(found.replace(" ", ""), found)
            end = m.end()
            # an abbreviation ending the sentence keeps the sentence's full stop
            if found.endswith(".") and m.string[end:].strip() == "":
                words += "."
            return words

        out.append((re.compile(rf"(?<![\w.])({body})(?![\w])"), expand))
    return out
