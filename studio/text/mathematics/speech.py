"""MathML (presentation markup) -> the words a narrator of technical books says, by rules that are data.

Why rules as data: every reading ("squared", "over", "C of A") is a line of a table per
language (``rules/<language>.json``), so a reading is fixed by editing one line, and
the words land in the sentence like any other word (a lexicon entry then fixes one
word's sound). Numbers stay digits: the normaliser says them in the book's language.

The walk reads a row of MathML children with one look ahead: fences ("(", "|", "{")
group what they hold (an absolute value, a set, a quantity), an identifier before a
group is a function applied to it ("C(A)" -> "C of A") when MathML says so (U+2061) or
the identifier is a capital or a function's name, and a large operator (a sum, an
integral, a limit) takes the rest of its row up to the next relation as its body.
"""

from __future__ import annotations

import json
import re
import threading
import unicodedata
from dataclasses import dataclass
from importlib import resources
from typing import Any

from lxml import etree

from studio.core.language import language_family

_LOCK = threading.Lock()
_TABLES: dict[str, dict[str, Any]] = {}
_OPEN = {"(": ")", "[": "]", "{": "}", "\u27e8": "\u27e9", "\u2329": "\u232a", "\u230a": "\u230b", "\u2308": "\u2309",
         "|": "|", "\u2016": "\u2016", "\u2225": "\u2225"}
_CLOSE = frozenset(")]}\u27e9\u232a\u230b\u2309")
_BARS = frozenset("|\u2016\u2225")
_RELATIONS = frozenset("= \u2260 < > \u2264 \u2265 \u2a7d \u2a7e \u2248 \u2261 \u2245 \u223c \u221d \u2254 "
                       "\u2208 \u2209 \u2282 \u2286 \u2283 \u2287 \u21d2 \u21d4 \u27f9 \u27fa , ;".split())
_SKIPPED = frozenset({"annotation", "annotation-xml", "mphantom", "none", "mprescripts", "maligngroup", "malignmark"})
#: an exponent of more words than this is closed with "end of exponent", so the listener hears where it stops
LONG_EXPONENT = 1


def rules(language: str) -> dict[str, Any]:
    """The reading table of ``language`` (an ISO 639-1 family), English where none exists."""
    family = language_family(language) or "en"
    table = _TABLES.get(family)
    if table is not None:
        return table
    with _LOCK:
        folder = resources.files("studio.text.mathematics").joinpath("rules")
        name = f"{family}.json" if folder.joinpath(f"{family}.json").is_file() else "en.json"
        table = json.loads(folder.joinpath(name).read_text("utf-8"))
        _TABLES[family] = table
    return table


def localname(el: etree._Element) -> str:
    tag = el.tag
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


def token(el: etree._Element) -> str:
    """A token element's text, with mathematical letters (U+1D400...) made plain."""
    return unicodedata.normalize("NFKC", "".join(el.itertext())).strip()


@dataclass
class _Group:
    """Children between a fence and its partner (``close`` "" when the row has none); ``script``:
    the power or index written on the closing fence ("(x+1)^2" as some converters write it)."""

    open: str
    close: str
    items: list[Any]
    script: Any = None


def say_mathml(root: etree._Element, language: str) -> str:
    """The words of a ``<math>`` element (or any MathML element) in ``language``."""
    return _tidy(Reader(rules(language)).read(root))


def _single(el: etree._Element) -> etree._Element:
    """``el`` without the rows that hold only one element (``<mrow><mn>1</mn></mrow>``)."""
    while localname(el) == "mrow" and len(el) == 1:
        el = el[0]
    return el


def _tidy(words: str) -> str:
    words = re.sub(r"\s+", " ", words).strip()
    words = re.sub(r"\s+([,;:])", r"\1", words)
    words = re.sub(r"([,;])(?:\s*[,;])+", r"\1", words)
    return words.strip(" ,;")


class Reader:
    """One walk of MathML with one language's table."""

    def __init__(self, table: dict[str, Any]) -> None:
        self.t = table
        self.tpl: dict[str, str] = table["templates"]
        self.arrow = ""  # inside a limit's "x -> 0", the arrow's reading

    def fill(self, name: str, **parts: str) -> str:
        return self.tpl[name].format(**parts)

    # ------------------------------------------------------------ elements

    def read(self, el: Any) -> str:
        if isinstance(el, _Group):
            return self.group(el)
        name = localname(el)
        if name in _SKIPPED:
            return ""
        if name == "semantics":
            first = next((c for c in el if localname(c) not in _SKIPPED), None)
            return self.read(first) if first is not None else ""
        if name == "mi":
            return self.identifier(token(el))
        if name == "mn":
            return token(el)
        if name == "mo":
            return self.operator(token(el))
        if name in ("mtext", "ms"):
            return token(el)
        if name == "mspace":
            return ""
        if name == "mfrac":
            return self.fraction(el)
        if name in ("msup", "msub", "msubsup", "munder", "mover", "munderover"):
            return self.scripts(el, name, [])
        if name == "msqrt":
            return self.fill_root("2", self.row(list(el)), "")
        if name == "mroot":
            kids = list(el)
            if len(kids) < 2:
                return self.row(kids)
            return self.fill_root(token(kids[1]) if localname(kids[1]) in ("mn", "mi") else "",
                                  self.read(kids[0]), self.read(kids[1]))
        if name == "mfenced":
            return self.group(self.fenced(el))
        if name == "mtable":
            return self.table(el, "", "")
        if name == "mmultiscripts":
            return " ".join(w for w in (self.read(c) for c in el) if w)
        return self.row(list(el))  # math, mrow, mstyle, mpadded, menclose, merror, mtd...

    def identifier(self, text: str) -> str:
        if text in self.t["identifiers"] or any(c.isalnum() for c in text):
            return self.t["identifiers"].get(text, text)
        return self.t["operators"].get(text, text)  # a mark set as an identifier ("f: X -> Y")

    def operator(self, text: str) -> str:
        if text in ("\u2192", "\u27f6") and self.arrow:
            return self.arrow
        operators = self.t["operators"]
        return operators[text] if text in operators else self.identifier(text)

    def fraction(self, el: etree._Element) -> str:
        kids = list(el)
        if len(kids) != 2:
            return self.row(kids)
        num, den = (_single(k) for k in kids)
        if (el.get("linethickness") or "").strip() in ("0", "0px", "0pt", "0em"):
            return self.fill("binomial", num=self.read(num), den=self.read(den))
        if localname(num) == "mn" and localname(den) == "mn" and token(num).isdigit() and token(den).isdigit():
            return f"{token(num)}/{token(den)}"  # the normaliser says "one half", "three quarters"
        a, b = self.read(num), self.read(den)
        compound = len(a.split()) > 1 or len(b.split()) > 1  # "a plus b over c" would be heard as a + b/c
        return self.fill("frac_long" if compound else "frac", num=a, den=b)

    def fill_root(self, index: str, x: str, said_index: str) -> str:
        roots = self.t["roots"]
        return roots[index].format(x=x) if index in roots else roots[""].format(x=x, index=said_index)

    def base_symbol(self, el: etree._Element) -> str:
        """The operator or function name a script element is built on ("∑", "lim"), else ""."""
        kids = list(el)
        if not kids:
            return ""
        base = kids[0]
        while localname(base) in ("mrow", "mstyle") and len(base) == 1:
            base = base[0]
        text = token(base) if localname(base) in ("mo", "mi") else ""
        return text if text in self.t["large"] else ""

    def scripts(self, el: etree._Element, name: str, body: list[Any]) -> str:
        """Powers, indices, limits and accents; ``body``: what a large operator applies to."""
        kids = list(el)
        if not kids:
            return ""
        large = self.base_symbol(el)
        if large:
            under = over = ""
            if name in ("msub", "munder", "msubsup", "munderover") and len(kids) > 1:
                under = self.under(kids[1], large)
            if name in ("msup", "mover") and len(kids) > 1:
                over = self.read(kids[1])
            elif name in ("msubsup", "munderover") and len(kids) > 2:
                over = self.read(kids[2])
            return self.large(large, under, over, body)
        base = self.read(kids[0])
        if name == "msup" and len(kids) > 1:
            return self.power(kids[0], base, kids[1])
        if name == "msub" and len(kids) > 1:
            return self.sub(kids[0], base, kids[1])
        if name == "msubsup" and len(kids) > 2:
            return self.power(kids[0], self.sub(kids[0], base, kids[1]), kids[2])
        if name == "mover" and len(kids) > 1:
            accent = token(kids[1]) if localname(kids[1]) == "mo" else ""
            if accent in self.t["accents"]:
                return self.t["accents"][accent].format(base=base)
            return f"{base} {self.read(kids[1])}"
        return " ".join(self.read(k) for k in kids)

    def under(self, el: etree._Element, large: str) -> str:
        if large == "lim":
            self.arrow, kept = self.t.get("limit_arrow", ""), self.arrow
            try:
                return self.read(el)
            finally:
                self.arrow = kept
        return self.read(el)

    def large(self, symbol: str, under: str, over: str, body: list[Any]) -> str:
        both, only_under, plain = self.t["large"][symbol]
        said = self.row(body)
        if under and over:
            return both.format(under=under, over=over, body=said)
        if under or over:
            return only_under.format(under=under or over, body=said)
        return plain.format(body=said)

    def power(self, base_el: etree._Element, base: str, exp_el: etree._Element) -> str:
        if localname(base_el) == "mrow" and len(base.split()) > 1:
            base = self.fill("quantity", x=base)
        return self.power_of(base, exp_el)

    def power_of(self, base: str, exp_el: etree._Element) -> str:
        exp = self.read(exp_el)
        key = re.sub(r"\s+", "", token(exp_el))
        if key in self.t["powers"]:
            return self.t["powers"][key].format(base=base)
        return self.fill("power_long" if len(exp.split()) > LONG_EXPONENT else "power", base=base, exp=exp)

    def sub(self, base_el: etree._Element, base: str, sub_el: etree._Element) -> str:
        if localname(base_el) == "mi" and token(base_el) == "log":
            return self.fill("log_base", sub=self.read(sub_el))
        return self.fill("sub", base=base, sub=self.read(sub_el))

    # ------------------------------------------------------------ rows

    def row(self, kids: list[Any]) -> str:
        items = self.grouped([k for k in kids if isinstance(k, _Group) or localname(k) not in _SKIPPED])
        out: list[str] = []
        i = 0
        while i < len(items):
            item = items[i]
            nxt = items[i + 1] if i + 1 < len(items) else None
            if not isinstance(item, _Group) and self.is_large(item):
                end = next((j for j in range(i + 1, len(items)) if self.is_relation(items[j])), len(items))
                out.append(self.large_item(item, items[i + 1:end]))
                i = end
                continue
            if nxt is not None and self.is_apply(nxt):  # f U+2061 (x): f applied to x
                arg = items[i + 2] if i + 2 < len(items) else None
                if arg is not None:
                    out.append(self.fill("apply", f=self.read(item), x=self.argument(arg)))
                    i += 3
                    continue
            if isinstance(nxt, _Group) and nxt.open in "([" and nxt.close and not isinstance(item, _Group):
                if self.is_function(item):
                    out.append(self.fill("apply", f=self.read(item), x=self.argument(nxt)))
                    i += 2
                    continue
                if localname(item) in ("mn", "mi"):  # "2(x+1)", "n(n+1)": a product
                    said = self.group(nxt)
                    out.append(self.fill("times", a=self.read(item),
                                         b=self.fill("quantity", x=said) if len(said.split()) > 1 else said))
                    i += 2
                    continue
            if nxt is not None and self.is_function(item, named=True) and not self.is_relation(nxt):
                out.append(self.fill("apply", f=self.read(item), x=self.argument(nxt)))  # "sin x": sine of x
                i += 2
                continue
            out.append(self.read(item))
            i += 1
        return " ".join(w for w in out if w)

    def grouped(self, kids: list[Any]) -> list[Any]:
        """``kids`` with each fence and what it holds, up to its partner, made one :class:`_Group`."""
        out: list[Any] = []
        i = 0
        while i < len(kids):
            kid = kids[i]
            text = token(kid) if not isinstance(kid, _Group) and localname(kid) == "mo" else ""
            if not isinstance(kid, _Group) and localname(kid) == "mrow" and len(kid) >= 2:
                inner = self.grouped(list(kid))
                if len(inner) == 1 and isinstance(inner[0], _Group) and inner[0].close:
                    out.append(inner[0])  # an mrow that is one fenced group: "\left( ... \right)"
                    i += 1
                    continue
            if text in _OPEN:
                end = self.partner(kids, i, text)
                if end is not None:
                    closing = kids[end]
                    script = closing if localname(closing) != "mo" else None
                    out.append(_Group(text, _OPEN[text], kids[i + 1:end], script))
                    i = end + 1
                    continue
                if text in "({[":  # an opening fence alone ("{" of cases): what follows is its group
                    out.append(_Group(text, "", kids[i + 1:]))
                    break
            out.append(kid)
            i += 1
        return out

    @staticmethod
    def partner(kids: list[Any], start: int, opening: str) -> int | None:
        closing, depth = _OPEN[opening], 0
        for j in range(start + 1, len(kids)):
            kid = kids[j]
            if isinstance(kid, _Group):
                continue
            if localname(kid) in ("msup", "msub", "msubsup") and len(kid) and localname(kid[0]) == "mo":
                if token(kid[0]) == closing and depth == 0:
                    return j  # the closing fence carries the script
                depth -= token(kid[0]) in _CLOSE
                continue
            if localname(kid) != "mo":
                continue
            text = token(kid)
            if text == closing and depth == 0:
                return j
            if text in _OPEN and text not in _BARS:
                depth += 1
            elif text in _CLOSE:
                depth -= 1
                if depth < 0:
                    return None
        return None

    def fenced(self, el: etree._Element) -> _Group:
        """An ``<mfenced>``: its fences (attributes) and children, with its separators between them."""
        opening = (el.get("open") if el.get("open") is not None else "(").strip()
        closing = (el.get("close") if el.get("close") is not None else ")").strip()
        separators = (el.get("separators") if el.get("separators") is not None else ",").split() or [","]
        items: list[Any] = []
        for n, kid in enumerate(el):
            if n:
                mo = etree.Element("mo")
                mo.text = separators[min(n - 1, len(separators) - 1)][:1] if separators[0] else ","
                items.append(mo)
            items.append(kid)
        return _Group(opening, closing, items)

    def group(self, g: _Group) -> str:
        if g.script is not None:
            said = self.group(_Group(g.open, g.close, g.items))
            kids = list(g.script)
            name = localname(g.script)
            if name == "msub" and len(kids) > 1:
                return self.fill("sub", base=said, sub=self.read(kids[1]))
            if len(said.split()) > 1:
                said = self.fill("quantity", x=said)
            if name == "msubsup" and len(kids) > 2:
                said = self.fill("sub", base=said, sub=self.read(kids[1]))
            return self.power_of(said, kids[-1]) if len(kids) > 1 else said
        tables = [k for k in g.items if not isinstance(k, _Group) and localname(k) == "mtable"]
        if len(tables) == 1 and len(g.items) == 1:
            return self.table(tables[0], g.open, g.close)
        inner = self.row(g.items)
        if g.open == "|" and g.close == "|":
            return self.fill("abs", x=inner)
        if g.open in "\u2016\u2225":
            return self.fill("norm", x=inner)
        if g.open == "\u230a":
            return self.fill("floor", x=inner)
        if g.open == "\u2308":
            return self.fill("ceiling", x=inner)
        if g.open in "\u27e8\u2329":
            return self.fill("inner", x=self.listing(g.items))
        if g.open == "{" and g.close == "}":
            return self.set(g.items)
        parts = self.split(g.items, ",")
        if g.open in "[(" and g.close in "])" and g.open + g.close in ("[]", "[)", "(]") and len(parts) == 2:
            kind = "interval_closed" if g.open + g.close == "[]" else "interval_open"
            return self.fill(kind, a=self.row(parts[0]), b=self.row(parts[1]))
        return inner

    def argument(self, item: Any) -> str:
        return self.row(item.items) if isinstance(item, _Group) and item.open in "([" else self.read(item)

    def set(self, items: list[Any]) -> str:
        for bar in ("|", "\u2223", ":"):
            parts = self.split(items, bar)
            if len(parts) == 2:
                return self.fill("set_builder", x=self.row(parts[0]), y=self.row(parts[1]))
        return self.fill("set", x=self.row(items))

    def listing(self, items: list[Any]) -> str:
        parts = [self.row(p) for p in self.split(items, ",")]
        return f" {self.tpl['and']} ".join(p for p in parts if p)

    @staticmethod
    def split(items: list[Any], mark: str) -> list[list[Any]]:
        out: list[list[Any]] = [[]]
        for item in items:
            if not isinstance(item, _Group) and localname(item) == "mo" and token(item) == mark:
                out.append([])
            else:
                out[-1].append(item)
        return out

    # ------------------------------------------------------------ kinds of items

    def is_large(self, item: Any) -> bool:
        name = localname(item)
        if name in ("mo", "mi"):
            return token(item) in self.t["large"] and token(item) in "\u2211\u220f\u222b\u222c\u222e\u22c3\u22c2"
        return name in ("msub", "msup", "msubsup", "munder", "mover", "munderover") and bool(self.base_symbol(item))

    def large_item(self, item: etree._Element, body: list[Any]) -> str:
        name = localname(item)
        if name in ("mo", "mi"):
            return self.large(token(item), "", "", body)
        return self.scripts(item, name, body)

    def is_relation(self, item: Any) -> bool:
        return not isinstance(item, _Group) and localname(item) == "mo" and token(item) in _RELATIONS

    @staticmethod
    def is_apply(item: Any) -> bool:
        return not isinstance(item, _Group) and localname(item) == "mo" and token(item) == "\u2061"

    def is_function(self, item: Any, named: bool = False) -> bool:
        """An identifier read as a function before a bracket: a capital ("C(A)"), a function's name
        ("sin", "f"), or one of those with an index or a power ("T_A(x)", "f^{-1}(y)"). ``named``:
        only a function's name of two letters or more, which takes its argument without brackets ("sin x")."""
        if isinstance(item, _Group):
            return False
        name = localname(item)
        if name in ("msub", "msup", "msubsup") and len(item):
            return self.is_function(item[0], named)
        if name not in ("mi", "mo"):
            return False
        text = token(item)
        if named:
            return len(text) > 1 and text in self.t["functions"]
        return name == "mi" and (text in self.t["functions"] or (len(text) == 1 and text.isupper()))

    # ------------------------------------------------------------ tables

    def table(self, el: etree._Element, opening: str, closing: str) -> str:
        rows = [[self.read(cell) for cell in tr if localname(cell) == "mtd"]
                for tr in el if localname(tr) in ("mtr", "mlabeledtr")]
        rows = [r for r in rows if any(r)]
        if not rows:
            return ""
        cols = max(len(r) for r in rows)
        join = self.tpl["cell_join"]
        if not opening or opening == "{":  # aligned equations, cases: line after line
            return self.fill("lines", body=self.tpl["row_join"].join(" ".join(c for c in r if c) for r in rows))
        if cols == 1 and opening != "|":
            return self.fill("column_vector", body=join.join(r[0] for r in rows))
        body = self.tpl["row_join"].join(self.fill("row", n=str(n), cells=join.join(r)) for n, r in enumerate(rows, 1))
        kind = "determinant" if opening == "|" else "matrix"
        return self.fill(kind, rows=str(len(rows)), cols=str(cols), body=body)
