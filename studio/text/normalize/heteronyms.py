"""English heteronyms: the same spelling, said two ways, chosen by context.

Why respellings: the voice's phonemizer (espeak-ng) reads each of these words one
way, mostly the noun, whatever the sentence does with it ("wound the clock" comes
out as the injury). The other reading is written as a respelling that espeak-ng says
right, checked through the real phonemizer by the tests ("wownd", "red", "led"; a
doubled last consonant moves the stress to the last syllable: "rekord", "objeckt").
The part of speech is guessed by a few word-neighbour rules (what comes before and
after), which is enough for the common cases and never touches a word it is unsure
of: then espeak-ng's own reading stands.
"""

from __future__ import annotations

import re
from typing import Callable

DET = frozenset(
    "a an the this that these those my your his her its our their every each no some any one another such "
    "what which whose at of for in on with from by world great big small new old good bad first last full "
    "partial previous whole public criminal court police".split()
)
VERB_CUES = frozenset(
    "to will would can could shall should must may might cannot can't won't wouldn't couldn't shouldn't "
    "don't doesn't didn't do did let's please never i we you they".split()
)
OBJECTS = frozenset("the a an his her their its our your my it them him me us this that these those some all every each".split())
SUBJECTS = frozenset("he she it who that which one everyone nobody someone somebody".split())
#: the respellings that are a verb's reading (the printed word is then the noun)
_VERB_READINGS: set[str] = set()
#: the respellings that are a noun's reading (the printed word is then the verb)
_NOUN_READINGS: set[str] = set()


def _verb(alt: str, *, after: str = "", before: str = "") -> tuple[str, Callable[[str, str, str], bool]]:
    nexts, prevs = frozenset(after.split()), frozenset(before.split())
    _VERB_READINGS.add(alt)

    def test(prev: str, nxt: str, sentence: str) -> bool:
        if prev in DET:
            return False
        return prev in VERB_CUES or prev in prevs or nxt in OBJECTS or nxt in nexts or (not prev and nxt in OBJECTS)

    return alt, test


def _noun(alt: str, *, after: str = "", before: str = "") -> tuple[str, Callable[[str, str, str], bool]]:
    nexts, prevs = frozenset(after.split()), frozenset(before.split())
    _NOUN_READINGS.add(alt)

    def test(prev: str, nxt: str, sentence: str) -> bool:
        return prev in DET or prev in prevs or nxt in nexts

    return alt, test


def _when(alt: str, *, after: str = "", before: str = "", both: bool = False) -> tuple[str, Callable[[str, str, str], bool]]:
    nexts, prevs = frozenset(after.split()), frozenset(before.split())

    def test(prev: str, nxt: str, sentence: str) -> bool:
        if both:
            return prev in prevs and nxt in nexts
        return prev in prevs or nxt in nexts

    return alt, test


_AUXILIARIES = frozenset("do does did can could will would shall should must may might let make made help cannot to".split())


def _word_before(sentence: str, word: str) -> str:
    """The second word before the first ``word`` ("did" in "did you read"): an auxiliary there keeps the plain verb."""
    found = re.search(r"([A-Za-z']+)\s+\w+\s+" + re.escape(word) + r"\b", sentence, re.IGNORECASE)
    return found.group(1).lower() if found else ""


def _past_read(prev: str, nxt: str, sentence: str) -> bool:
    if prev in ("had", "has", "have", "having", "was", "were", "been", "be", "being", "is", "are", "well", "widely", "once"):
        return True
    if re.search(r"\b(?:yesterday|last (?:night|week|year|month)|ago|already)\b", sentence, re.I):
        return prev not in VERB_CUES - {"i", "we", "you", "they"}
    # "the book in which I read this ... was sent": a past auxiliary after "I read" puts the clause in the past
    after = re.split(r"\b" + re.escape(prev) + r"\s+read\b", sentence, maxsplit=1, flags=re.IGNORECASE)
    return (prev in ("i", "we", "you", "they") and len(after) == 2 and _word_before(sentence, "read") not in _AUXILIARIES
            and bool(re.search(r"\b(?:was|were|had)\b", after[1], re.IGNORECASE)))


_PARTICLES = "up down around round through along away back its his her the a their my our it them him himself herself itself"
#: what winds (past "wound", /waʊnd/): "the path wound down", "it wound away"; "who"/"which"/"that" only before a particle
_WINDERS = "it road roads path paths river rivers stream streams track trail lane way procession line"
_MOTIONS = "up down around round through along away about back past between across over into out its"
#: nouns a metal is made into ("broken lead heart"); "lead singer", "lead role" and the like stay /liːd/
_LEAD_THINGS = ("heart hearts box coffin casket seal seals plate plates pot pots ball balls bar bars ingot ingots tablet tablets "
                "soldier toy toys type lining sinker sinkers foil dust fumes gutter gutters statue")
#: things called "aged" for their maturing (one syllable): "some aged cheese"
_MATURED = "cheese cheeses wine wines whisky whiskey beef steak steaks rum brandy ham vinegar"
_NUMBER_WORDS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
                 "eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred")


def _wound(prev: str, nxt: str, sentence: str) -> bool:
    if prev in _WINDERS.split() or (prev in ("who", "which", "that") and nxt in _MOTIONS.split()):
        return True
    return prev not in DET and (prev in ("he", "she", "they", "i", "we", "had", "has", "have", "was", "were", "been", "then", "and")
                                or nxt in _PARTICLES.split())


#: what a bow said /boʊ/ goes with (the weapon, the ribbon, the fiddler's); otherwise it is the
#: bending, said /baʊ/, as are a ship's bow and a bow to someone ("made his bow", "a graceful bow")
_BOW_THINGS = re.compile(r"\b(?:arrows?|archers?|archery|strings?|ribbons?|violins?|fiddles?|cellos?|tie|knot|"
                         r"hair|window|legged|shot|drew|bent|quiver)\b", re.IGNORECASE)
_CLOSE_VERB = _verb("cloze", after="up down off ranks shop")[1]
_VERB_READINGS.discard("cloze")


def _bow(prev: str, nxt: str, sentence: str) -> bool:
    return not _BOW_THINGS.search(sentence) or prev in VERB_CUES or nxt in ("down", "before", "low", "deeply", "out")


def _close(prev: str, nxt: str, sentence: str) -> bool:
    """"cloze" for the verb and for the noun that means the end ("at the close of the song")."""
    return (prev in ("the", "a", "its", "his", "her", "their") and nxt == "of") or _CLOSE_VERB(prev, nxt, sentence)


def _aged(prev: str, nxt: str, sentence: str) -> bool:
    if nxt[:1].isdigit() or nxt in _MATURED.split() or nxt in _NUMBER_WORDS.split():
        return False
    if prev in ("an", "the", "very", "his", "her", "their", "my", "our", "and"):
        return True
    # "some aged widows", "your aged mother": a determiner before and a noun after ("those aged between 18 and 65" not)
    return prev in ("some", "your", "its", "these", "those", "poor", "many") and nxt.isalpha() \
        and nxt not in "between from over under about in at by and or to of for with than".split()

#: word -> (respelling, does this context call for it?); the word's other reading is espeak-ng's own
HETERONYMS: dict[str, tuple[str, Callable[[str, str, str], bool]]] = {
    # stress moves to the verb's last syllable
    "record": _verb("rekord"), "object": _verb("objeckt", before="strongly"), "present": _verb("prezent"),
    "conduct": _verb("conduckt"), "permit": _verb("permitt"), "perfect": _verb("perfeckt", after="it"),
    "conflict": _verb("conflickt", after="with"), "project": _verb("projeckt", after="onto into forward outward confidence power"),
    "rebel": _verb("rebell", after="against"), "suspect": _verb("suspeckt", after="foul"),
    "convict": _verb("convikt"), "contest": _verb("contesst"), "insult": _verb("insullt"),
    "increase": _verb("inkreese", after="by sharply steadily rapidly dramatically slightly"),
    "progress": _verb("progresss", after="to through towards toward slowly rapidly quickly beyond"),
    "insert": _verb("insurt"), "transfer": _verb("transferr"),
    "content": _when("contentt", after="with to", before="was is am are were be been feel felt seem seemed seems quite "
                     "perfectly very more less not remain remained look looked so"),
    "console": _verb("consohl", after="himself herself themselves"), "survey": _verb("survay"),
    "attribute": _verb("attribbute"),
    "desert": _verb("dessert", after="them him her us me you"),
    # a voiced last consonant for the verb
    "use": _verb("yooz"), "close": ("cloze", lambda p, n, s: _close(p, n, s)),
    "excuse": _verb("excuze", after="me"), "abuse": _verb("abuze"), "house": _verb("howz"),
    "mouth": _verb("mouthe", after="words platitudes off"),
    # -ate: "-it" for the adjective and noun, "-ayt" for the verb
    "separate": _verb("separayt"), "estimate": _verb("estimayt"), "graduate": _verb("graduayt", after="from cum summa magna"),
    "moderate": _verb("moderayt"), "intimate": _verb("intimayt"), "alternate": _verb("alternayt", after="between"),
    "deliberate": _verb("deliberayt", after="on over about"), "approximate": _verb("approximayt"),
    "appropriate": _verb("appropriayt"), "associate": _noun("associut", after="professor editor director degree member producer dean justice"),
    # nouns espeak-ng reads as the verb
    "refuse": _noun("ref-yoos", after="collection collector collectors bin bins tip dump heap lorry truck disposal sack sacks",
                    before="household garden town municipal domestic"),
    "convert": _noun("konvert"), "refund": _noun("ree-fund", before="tax"), "digest": _noun("dyjest"),
    "resume": _noun("rezumay"), "produce": _noun("prod-yoose", before="fresh local farm organic"),
    # vowels
    "wound": ("wownd", _wound),
    "read": ("red", _past_read),
    "lead": _when("led", after="pipe pipes poisoning paint weight weights shot pencil pencils soldiers crystal mine mines ore roof sheet balloon bullet bullets "
                  + _LEAD_THINGS, before="of molten red white as sheet broken melted"),
    "tear": _verb("tair", after="up down apart off open out away into through"),
    "tears": _when("tairs", after="up down apart off open out away into through at", before="he she it who"),
    "wind": _verb("wined", after="up down round around"), "winds": _when("wineds", before="road path river stream trail it that which who he she", after="its up down through around round along past between"),
    "bow": ("bau", lambda p, n, s: _bow(p, n, s)),
    "row": _when("rau", before="blazing furious terrible huge big family flaming almighty public", after="with about over between"),
    "lives": _when("livz", before="he she it who that which one everyone nobody someone somebody", after="in on at with near alone here there by off under next happily together"),
    "live": _when("lyve", after="music broadcast broadcasts performance performances audience wire wires ammunition bait show shows "
                  "recording album coverage feed stream animals animal coals round rounds television radio event concert cattle grenade target shell shells version"),
    "minute": _when("my-nute", after="details detail amounts amount particles particle quantities quantity traces trace fraction changes "
                    "differences examination organisms creatures inspection portion scale", before="very so most too extremely quite"),
    "number": _when("nummer", after="than", before="grew felt feel became went getting grow"),
    "dove": _when("doave", after="into in off under for down out from behind through over headfirst deep", before="he she they i we then and who"),
    "bass": _when("bas", after="fishing fishermen fisherman boat", before="sea striped largemouth smallmouth rock caught catch"),
    "does": _when("doze", after="graze grazed grazing", before="the two three four several many some few and"),
    "sow": _when("sau", before="a the old fat that this"),
    "axes": _when("axeez", before="x y z two three coordinate principal both horizontal vertical orthogonal major minor perpendicular"),
    "learned": _when("lernid", before="a an the most very so more his her my our their this such learned"),
    "aged": ("aijid", _aged),
    "blessed": _when("blessid", before="the a most thrice this our your", after="virgin mother sacrament event be are art day land isles saints lord assurance"),
    "august": ("aw-gust", lambda p, n, s: True),
}
#: capitalised words with another reading: the nationality, the man from Uz
PROPER = {"Polish": ("Poalish", "people government army language border forces king history capital writer poet national jews city cuisine film"),
          "Job": ("Jobe", "said answered replied cursed")}
WORDS = re.compile(r"\b(" + "|".join(sorted(HETERONYMS, key=len, reverse=True)) + r"|Polish|Job)\b", re.I)


def noun_or_verb(word: str) -> str:
    """"verb" when ``word``'s respelling is its verb reading, "noun" when its noun's, "" for the
    heteronyms whose readings are not a noun and a verb ("wound", "lead", "read")."""
    alt = HETERONYMS.get(word.lower(), ("", None))[0]
    return "verb" if alt in _VERB_READINGS else "noun" if alt in _NOUN_READINGS else ""


def _neighbours(text: str, start: int, end: int) -> tuple[str, str]:
    before = re.search(r"([A-Za-z']+)[\s,]*$", text[:start])
    after = re.match(r"[\s]*([A-Za-z']+)", text[end:])
    prev = before.group(1).lower() if before and not re.search(r"[.!?;:]\s*$", text[:start]) else ""
    nxt = after.group(1).lower() if after else ""
    return prev, nxt


#: hyphenated compounds that take a heteronym's other reading: the word -> the compounds' other parts
COMPOUND_READINGS = {
    "lead": ("led", frozenset("lined coloured colored grey gray covered based free acid glazed sheathed weighted "
                              "poisoning poisoned pencil pipe roofed".split())),
    "read": ("red", frozenset("well widely much little best half ill deeply".split())),
    "wound": ("wownd", frozenset("up".split())),
}


def in_compound(text: str, start: int, end: int) -> str:
    """The hyphenated compound the word at ``text[start:end]`` is part of ("counting-house"), or ""."""
    if not ((start > 1 and text[start - 1] in "-‐" and text[start - 2].isalpha())
            or (end + 1 < len(text) and text[end] in "-‐" and text[end + 1].isalpha())):
        return ""
    left = re.search(r"[A-Za-z'’\-‐]*$", text[:start]).group(0)
    right = re.match(r"[A-Za-z'’\-‐]*", text[end:]).group(0)
    return (left + text[start:end] + right).strip("-‐")


def _compound_reading(word: str, compound: str) -> str:
    """A heteronym inside a compound is read as the compound wants (mostly the noun: "counting-house"):
    decided by the compound, never by the sentence around it."""
    alt, others = COMPOUND_READINGS.get(word.lower(), ("", frozenset()))
    parts = {p.lower() for p in re.split(r"[-‐]", compound)} - {word.lower()}
    if alt and parts & others:
        return alt[:1].upper() + alt[1:] if word[:1].isupper() else alt
    return word


def respell(m: re.Match[str]) -> str:
    """The match's reading in context: a respelling, or the word as printed."""
    return reading(m)


def reading(m: re.Match[str], *, tagged: bool = False) -> str:
    """:func:`respell`; ``tagged``: also ask gruut's tagger where the neighbours give no cue -- the
    candidate ``bench/heteronym_eval.py`` measures; it was no better on the labelled set and costs
    0.15-0.25 s a sentence, so the render does not use it (the book audit lists where the two disagree)."""
    word = m.group(0)
    text = m.string
    compound = in_compound(text, m.start(), m.end())
    if compound:
        return _compound_reading(word, compound)
    prev, nxt = _neighbours(text, m.start(), m.end())
    if word in PROPER:
        alt, nouns = PROPER[word]
        if prev or nxt in nouns.split() or (word == "Job" and prev in ("of", "like")):
            return alt if not (word == "Job" and prev in DET - {"of"}) else word
        return word
    if word == "august":
        return "aw-gust"
    low = word.lower()
    if low == "august" or low not in HETERONYMS:
        return word
    alt, test = HETERONYMS[low]
    if alt in _VERB_READINGS and prev == "to" and re.search(r"\b" + re.escape(low) + r"\s+to\s+$", text[:m.start()], re.IGNORECASE):
        return word  # "from mouth to mouth", "house to house": the same word either side of "to" is a noun
    use_alt = test(prev, nxt, text)
    if tagged and not use_alt and prev not in DET and low not in _TAGGER_BLIND:
        # no cue either way from the neighbours ("Indexers use headings"): the tagger reads the sentence
        use_alt = bool(_tagger_reading(text, m, low))
    if not use_alt:
        return word
    return alt[:1].upper() + alt[1:] if word[:1].isupper() else alt


#: noun/verb heteronyms whose respelling is also a noun's reading ("at the close", "a low bow"):
#: a part of speech cannot choose between their readings, so the neighbour rules do
_TAGGER_BLIND = frozenset({"close", "bow", "house"})


def _tagger_reading(text: str, m: re.Match[str], word: str) -> bool | None:
    """Does gruut's tagger (:mod:`studio.text.tagger`, proof-listening's too) call for the respelling of
    this noun/verb heteronym? None: not a noun/verb heteronym, or the tagger has no clear answer."""
    kind = noun_or_verb(word)
    if not kind:
        return None
    from studio.text import tagger

    nth = len(re.findall(r"\b" + re.escape(word) + r"\b", text[:m.start()], re.IGNORECASE))
    pos = tagger.part_of_speech(text, word, nth)
    if not pos:
        return None
    return pos == kind
