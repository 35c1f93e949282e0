"""German, French, Spanish and Italian: numbers, years, dates, ordinals, money,
percentages and times, written out by num2words with each language's print conventions.

Why per-language shapes before num2words: the digits are the same, the print is not.
"1.000" is a thousand in German, Spanish and Italian and "1 000" in French, "3,5" is a
decimal; an ordinal is "3." (German), "1er"/"2e" (French), "1.º"/"1ª" (Spanish,
Italian); money puts the symbol after the amount.
"""

from __future__ import annotations

import re
from typing import Callable

from studio.text.normalize import units
from studio.text.normalize.numbers import cardinal, decimal, ordinal, year

Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str]]

MONTHS = {
    "de": "Januar Februar März April Mai Juni Juli August September Oktober November Dezember",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "it": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
}
#: currency -> (one, many, minor one, minor many) per language
MONEY = {
    "de": {"€": ("Euro", "Euro", "Cent", "Cent"), "EUR": ("Euro", "Euro", "Cent", "Cent"), "$": ("Dollar", "Dollar", "Cent", "Cent"),
           "£": ("Pfund", "Pfund", "Pence", "Pence"), "CHF": ("Franken", "Franken", "Rappen", "Rappen"), "Fr.": ("Franken", "Franken", "Rappen", "Rappen")},
    "fr": {"€": ("euro", "euros", "centime", "centimes"), "EUR": ("euro", "euros", "centime", "centimes"), "$": ("dollar", "dollars", "cent", "cents"),
           "£": ("livre", "livres", "penny", "pence"), "CHF": ("franc suisse", "francs suisses", "centime", "centimes")},
    "es": {"€": ("euro", "euros", "céntimo", "céntimos"), "EUR": ("euro", "euros", "céntimo", "céntimos"), "$": ("dólar", "dólares", "centavo", "centavos"),
           "£": ("libra", "libras", "penique", "peniques")},
    "it": {"€": ("euro", "euro", "centesimo", "centesimi"), "EUR": ("euro", "euro", "centesimo", "centesimi"), "$": ("dollaro", "dollari", "centesimo", "centesimi"),
           "£": ("sterlina", "sterline", "penny", "pence")},
}
_AND = {"de": "und", "fr": "et", "es": "con", "it": "e"}
_PERCENT = {"de": "Prozent", "fr": "pour cent", "es": "por ciento", "it": "per cento"}
_SCALES = {
    "de": {"Mio.": ("Million", "Millionen"), "Mrd.": ("Milliarde", "Milliarden"), "Millionen": ("Million", "Millionen"), "Milliarden": ("Milliarde", "Milliarden")},
    "fr": {"millions": ("million", "millions"), "milliards": ("milliard", "milliards"), "M": ("million", "millions"), "Md": ("milliard", "milliards")},
    "es": {"millones": ("millón", "millones"), "mil millones": ("mil millones", "mil millones")},
    "it": {"milioni": ("milione", "milioni"), "miliardi": ("miliardo", "miliardi"), "mln": ("milione", "milioni"), "mld": ("miliardo", "miliardi")},
}
_OF = {"de": "", "fr": "de", "es": "de", "it": "di"}


def _thousands(language: str) -> str:
    """A number as printed: thousands by "." (or a space in French), decimals by ","."""
    group = r"[\u00a0\u202f ]" if language == "fr" else r"\."
    return rf"\d{{1,3}}(?:{group}\d{{3}})+(?:,\d+)?|\d+(?:,\d+)?"


def _value(token: str) -> tuple[int, str]:
    whole, _, frac = re.sub(r"[.\u00a0\u202f ]", "", token).partition(",")
    return int(whole or "0"), frac


def _words(token: str, language: str) -> str:
    n, frac = _value(token)
    return decimal(f"{n},{frac}", language, ",") if frac else cardinal(n, language)


def rules(language: str) -> list[Rule]:
    """The rules for ``language`` (``de``, ``fr``, ``es`` or ``it``), most specific first."""
    num = _thousands(language)
    months = MONTHS[language].split()
    month_alt = "|".join(months)
    money = MONEY[language]
    cur = "|".join(re.escape(c) for c in sorted(money, key=len, reverse=True))
    scales = _SCALES.get(language, {})
    scale_alt = "|".join(re.escape(s) for s in sorted(scales, key=len, reverse=True))
    of = _OF[language]

    def month_name(i: int) -> str:
        return months[i - 1]

    def day(d: int, before: str = "") -> str:
        if language == "de":
            if re.search(r"\b(?:am|vom|zum|dem|den|bis|im|beim|des)\s*$", before, re.I):
                return _de_ordinal(d, "en")
            return _de_ordinal(d, "e" if re.search(r"\b(?:der|die|das)\s*$", before, re.I) else "er")
        if language == "fr":
            return "premier" if d == 1 else cardinal(d, "fr")
        if language == "it":
            return "primo" if d == 1 else cardinal(d, "it")
        return cardinal(d, "es")

    def date_words(d: int, mo: int, y: str | None, before: str = "") -> str:
        name = month_name(mo)
        if language == "de":
            words = f"{day(d, before)} {name}"
        elif language == "es":
            words = f"{day(d)} de {name}"
        else:
            words = f"{day(d)} {name}"
        if y:
            words += f" {of} {year(int(y), language)}".replace("  ", " ") if language == "es" else f" {year(int(y), language)}"
        return words

    def text_date(m: re.Match[str]) -> str:
        mo = months.index(m.group(2)[:1].upper() + m.group(2)[1:] if language == "de" else m.group(2).lower()) + 1
        return date_words(int(m.group(1)), mo, m.group(3), m.string[: m.start()])

    def numeric_date(m: re.Match[str]) -> str:
        d, mo, y = int(m.group(1)), int(m.group(2)), m.group(3)
        if not (1 <= mo <= 12 and 1 <= d <= 31):
            return m.group(0)
        return date_words(d, mo, y, m.string[: m.start()])

    def amount(m: re.Match[str]) -> str:
        d = m.groupdict()
        c = d["c1"] or d["c2"]
        one, many, minor1, minor_n = money[c]
        token = d["a1"] or d["a2"]
        scale = d.get("s1") or d.get("s2")
        n, frac = _value(token)
        if scale:
            s_one, s_many = scales[scale]
            words = f"{_words(token, language)} {s_one if n == 1 and not frac else s_many}"
            return f"{words} {'de ' if language in ('fr', 'es') else 'di ' if language == 'it' else ''}{many}"
        words = f"{cardinal(n, language)} {one if n == 1 else many}"
        if frac:
            cents = int((frac + "0")[:2])
            if cents:
                words += f" {_AND[language]} {cardinal(cents, language)} {minor1 if cents == 1 else minor_n}"
        return words

    def ordinal_words(m: re.Match[str]) -> str:
        n = int(m.group(1))
        suffix = m.group(2) if m.lastindex and m.lastindex >= 2 else ""
        if language == "de":
            return _de_ordinal(n, "e")
        if language == "fr":
            return "première" if n == 1 and suffix in ("re", "ère") else ordinal(n, "fr")
        words = ordinal(n, language)
        if suffix in ("ª", "a") and words.endswith("o"):
            words = words[:-1] + "a"
        if suffix == "ra" and words.endswith("o"):
            words = words[:-1] + "a"
        if language == "es" and suffix == "er" and words.endswith("ero"):
            words = words[:-1]  # "1.er", "3.er": "primer", "tercer" before a noun
        return words

    def time_words(m: re.Match[str]) -> str:
        h, mins = int(m.group(1)), int(m.group(2) or 0)
        if language == "de":
            return f"{cardinal(h, 'de').replace('eins', 'ein')} Uhr" + (f" {cardinal(mins, 'de')}" if mins else "")
        if language == "fr":
            return f"{cardinal(h, 'fr').replace('un', 'une') if h in (1, 21) else cardinal(h, 'fr')} heure{'s' if h > 1 else ''}" + (f" {cardinal(mins, 'fr')}" if mins else "")
        if language == "es":
            return f"{cardinal(h, 'es').replace('uno', 'una')}" + (f" y {cardinal(mins, 'es')}" if mins else "")
        return f"{cardinal(h, 'it').replace('uno', 'una')}" + (f" e {cardinal(mins, 'it')}" if mins else "")

    def unit(m: re.Match[str]) -> str:
        n, frac = _value(m.group(1))
        return f"{_words(m.group(1), language)} {units.unit_words(m.group(3), n + (0.5 if frac else 0), language)}"

    def plain(m: re.Match[str]) -> str:
        token = m.group(0)
        n, frac = _value(token)
        if not frac and len(token) == 4 and token.isdigit() and 1100 <= n <= 2099:
            return year(n, language)
        return _words(token, language)

    scale_part = rf"(?:\s(?P<s1>{scale_alt}))?" if scale_alt else ""
    scale_part2 = rf"(?:\s(?P<s2>{scale_alt}))?" if scale_alt else ""
    ord_suffix = {"de": r"(\d{1,3})\.()(?=\s+(?:[A-ZÄÖÜ]|im\b|beim\b|in\s+der\b|" + month_alt + r"))",
                  "fr": r"(\d+)(er|re|ère|e|ème|è)\b",
                  "es": r"(\d+)\.?(er|ero|ra|º|ª|°|o|a)(?!\w)",
                  "it": r"(\d+)(º|ª|°)(?!\w)"}[language]
    time_pattern = {"de": r"\b([01]?\d|2[0-3])[:.]([0-5]\d)\s?Uhr\b|\b([01]?\d|2[0-3])()\s?Uhr\b",
                    "fr": r"\b([01]?\d|2[0-3])\s?h\s?([0-5]\d)?\b",
                    "es": r"\b([01]?\d|2[0-3]):([0-5]\d)\b",
                    "it": r"\b([01]?\d|2[0-3])[:.]([0-5]\d)\b"}[language]

    def time_any(m: re.Match[str]) -> str:
        if language == "de" and m.group(1) is None:
            h = int(m.group(3))
            return f"{cardinal(h, 'de').replace('eins', 'ein')} Uhr"
        return time_words(m)

    return [
        (re.compile(rf"(?<![\w.,])(?:(?P<c1>{cur})\s?(?P<a1>{num}){scale_part}|(?P<a2>{num}){scale_part2}\s?(?P<c2>{cur}))(?![\w])"), amount),
        (re.compile(rf"(?<![\w.,])({num})\s?%"), lambda m: f"{_words(m.group(1), language)} {_PERCENT[language]}"),
        (re.compile(time_pattern), time_any),
        (re.compile(rf"\b(\d{{1,2}})(?:er|re|ᵉʳ|\.|º)?\s+(?:de\s+)?({month_alt})(?:\s+(?:de\s+)?(\d{{4}}))?\b", re.I), text_date),
        (re.compile(r"\b(\d{1,2})[./](\d{1,2})[./](\d{4})\b"), numeric_date),
        (re.compile(ord_suffix), ordinal_words),
        (units.pattern(language), unit),
        (re.compile(rf"(?<![\w.,])-?(?:{num})(?![\w])"), plain),
    ]


def _de_ordinal(n: int, ending: str) -> str:
    """German ordinal with the ending the phrase needs: "dritte"/"dritter"/"dritten"."""
    words = ordinal(n, "de")
    stem = words[:-1] if words.endswith("e") else words
    return stem + ending
