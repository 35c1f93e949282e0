"""Who a piece of narration names beside a quote: speech verbs, names, descriptors, pronouns.

Why apart from the attribution: these are the words and patterns a reader goes by ("said
the old man", "Ahab replied", "the queen, being a prudent woman, said"), read the same way
by the attribution of lines (:mod:`studio.text.attribution`) and by the grouping of names
into people (:mod:`studio.text.people`). Pure: strings in, names out.
"""

from __future__ import annotations

import re

from studio.text.dialogue import INCISE_VERBS

SPEECH_VERBS = (
    "said says say saith asked asks cried cries replied replies answered answers exclaimed exclaims shouted "
    "whispered whispers murmured murmurs muttered mutters continued continues added adds observed remarked "
    "returned repeated began called roared interrupted inquired enquired demanded declared retorted rejoined "
    "protested explained insisted suggested grumbled sighed screamed yelled growled sobbed pleaded urged agreed "
    "admitted persisted responded resumed ejaculated hissed snapped warned thundered stammered faltered "
    "thought quoth twittered laughed sneered groaned gasped panted bellowed chuckled snarled chirped chirruped "
    "croaked quacked cackled mumbled squeaked wailed moaned whimpered lisped drawled blurted sputtered"
).split()
VERB_PATTERN = "(?:" + "|".join(sorted(SPEECH_VERBS + list(INCISE_VERBS), key=len, reverse=True)) + ")"
TITLES_PATTERN = ("Mr|Mrs|Miss|Ms|Dr|Captain|Capt|Sir|Lady|Lord|Mister|Master|Mistress|Aunt|Uncle|King|Queen|Prince|"
           "Princess|Colonel|Father|Mother|Madame|Monsieur|Mademoiselle|Señor|Señora|Don|Doña|Professor|"
           "Inspector|Mrs|Old|Little|Brother|Sister|Saint|St")
_CAP = r"[A-ZÀ-ÖØ-Þ][\w’'\-]*"
NAME_PATTERN = rf"(?:(?:{TITLES_PATTERN})\.?\s+)?{_CAP}(?:\s+{_CAP})*"
_DESCR = (r"\b(?:the|his|her|my|our|their|its|a|an|both|all\s+the|one\s+of\s+the|each\s+of\s+the|le|la|el)\s+"
          r"(?:[\w\-]+\s+){0,3}[\w\-]+")
PRONOUN = r"(?:he|she|I|they|il|elle|él|ella|je|yo)"
_ADV = r"(?:\s+(?:[a-z]+ly|[a-zé]+ment))?"
#: speakers a story leaves nameless: "said one of them", "said another", "said one on a branch"
_NAMELESS = r"\b(?:one\s+of\s+them|another|one(?=\s+(?:on|in|at|from|upon)\s))"
#: a name with a word of pity or fondness before it: "cried poor Gluck", "said little Hans"
_FOND = r"(?:(?:poor|little|old|young|good|dear|brave|honest)\s+)?"
_WHO = rf"(?P<who>{_NAMELESS}|{_FOND}{NAME_PATTERN}|{_DESCR}|{PRONOUN})"
#: "said Stubb" / "said the old man" / "says I" ; "Ahab replied" / "he cried"
_AFTER_VERB = re.compile(rf"\b{VERB_PATTERN}{_ADV}\s+{_WHO.replace('who', 'who1')}", re.UNICODE)
_BEFORE_VERB = re.compile(rf"{_WHO.replace('who', 'who2')}{_ADV}\s+(?:had\s+|has\s+)?{VERB_PATTERN}\b", re.UNICODE)
#: "the queen, being a prudent woman, said": a subject, an aside between commas, the speech verb
_ASIDE_VERB = re.compile(rf"{_WHO.replace('who', 'who5')},\s+[^,.;:!?\"“”]{{3,60}},\s+(?:[a-z]+ly\s+)?{VERB_PATTERN}\b",
                         re.UNICODE)
#: "the Sparrows chirruped, and said": the subject of a verb joined to the speech verb
_AND_VERB = re.compile(rf"{_WHO.replace('who', 'who4')}\s+(?:[a-z]+ly\s+)?[a-z]+ed,?\s+and\s+(?:then\s+)?{VERB_PATTERN}\b",
                       re.UNICODE)
GOES_ON = re.compile(r"\b(?:he|she)\s+(?:continued|added|resumed|went\s+on)\b|"
                      r"\b(?:continued|added|resumed)\s+(?:he|she)\b\W*$", re.IGNORECASE)
_SUBJECT_VERBS = ("was were had came went saw sat stood took ran flew put got gave made knew felt met began drew "
                  "awoke woke held heard told left spoke rose fell grew threw shook struck caught brought found kept lay turned "
                  "reprit prit fit").split()
_SUBJECT = re.compile(rf"(?P<s>{NAME_PATTERN}|\b(?:the|a|an|The|A|An)\s+(?:[\w\-]+\s+){{0,3}}?[\w\-]+)\s+"
                      rf"(?:[a-z]+ly\s+)?"
                      rf"(?:{'|'.join(_SUBJECT_VERBS)}|[a-z]{{3,}}ed)\b", re.UNICODE)
PERSONS = frozenset("person stranger child stranger visitor guest friend fellow servant".split())
_FR_INVERTED = re.compile(rf"\b{VERB_PATTERN}-(?:t-)?(?P<who3>il|elle|je)\b")
STOP_WORDS = frozenset(
    "The A An And But Then Now So Yes No Oh Ah Well It It's This That There Here What Why How When Where Who "
    "If In On At As For To Of Not Nor Or He She I They We You His Her My Our Their Its Your Very Indeed Come "
    "Go Good Dear Let Do Don't Is Are Was Were Be Had Have Has Will Would Shall Should Could Can May Might "
    "Mine Thou Thee Thy Sir Madam Lord Heaven One Some All Every Each After Before Again Still Just Only "
    "Perhaps Certainly Surely Quite Monday Tuesday Wednesday Thursday Friday Saturday Sunday Chapter Mais Et "
    "Le La Les Un Une Vous Je Il Elle Oui Non Ce Que Qui Tu Mon Ma Votre Monsieur Madame El Sí".split()
)
MALE = frozenset("mr mister sir lord king prince captain capt colonel father uncle brother monsieur señor don "
                  "master inspector husband man boy son soldier emperor gentleman".split())
FEMALE = frozenset("mrs miss ms lady queen princess mother aunt sister madame mademoiselle señora doña "
                    "mistress wife woman girl daughter witch".split())
PLURALS = frozenset("children people men women folk crowd".split())
HE = frozenset("he il él".split())
SHE = frozenset("she elle ella".split())


def gender_of(name: str) -> str:
    """"m", "f", "p" (a group: "the rogues", "the Town Councillors") or "" when the name does not say."""
    words = [w.rstrip(".").lower() for w in name.split()]
    if words and words[0] in DETERMINERS and (words[-1] in PLURALS or words[-1].endswith("s")
                                               and not words[-1].endswith("ss")):
        return "p"
    for w in (words[0], words[-1]):
        if w in MALE:
            return "m"
        if w in FEMALE:
            return "f"
    return ""


def clean_name(who: str) -> str:
    who = who.strip().rstrip(",.;:!?")
    words = who.split()
    if len(words) > 1 and re.fullmatch(_FOND, words[0] + " "):
        words = words[1:]  # "poor Gluck" is Gluck
    while words and words[-1] in STOP_WORDS:
        words.pop()
    if len(words) == 1 and re.fullmatch(TITLES_PATTERN, words[0].rstrip(".")):
        return ""  # a title alone ("Mr.") names nobody
    return " ".join(words)


def is_name(name: str) -> bool:
    """A person's name: not a common word; a title counts only before a name ("Sir Roland", not "Sir")."""
    words = name.split()
    if len(words) > 1 and re.fullmatch(TITLES_PATTERN, words[0].rstrip(".")):
        words = words[1:]
    return bool(words) and words[0] not in STOP_WORDS


DETERMINERS = frozenset("the his her my our their its a an both all one each le la el".split())
_NOT_IN_DESCRIPTOR = frozenset("to him her at in with on and as for from but that then who which was is "
                               "had has again once what when aloud rather quite very too still now "
                               "he she i they we it you".split())
_PREPOSITIONS = frozenset("at in on to from of with by into upon under over through about around round near "
                          "beside behind among across along inside outside within beyond toward towards against "
                          "like".split())


def descriptor_of(words: str) -> str:
    """"the old man to him" -> "the old man": a descriptor stops at a preposition or an adverb."""
    kept = [words.split()[0].lower()]
    for w in words.split()[1:]:
        if w.lower() in _NOT_IN_DESCRIPTOR or w.endswith("ly"):
            break
        kept.append(w)
    while len(kept) > 1 and kept[-1].lower() == "of":
        kept.pop()
    return " ".join(kept) if len(kept) > 1 else ""


def speaker_in(narration: str, *, before_quote: bool) -> tuple[str, str] | None:
    """``(who, kind)`` named by a speech verb in a piece of narration beside a quote, or None."""
    found = speakers_in(narration)
    return found[-1 if before_quote else 0][1:] if found else None


def speakers_in(narration: str) -> list[tuple[int, str, str]]:
    """Every ``(position, who, kind)`` a speech verb names in a piece of narration, in order."""
    candidates: list[tuple[int, str]] = []
    for m in _AFTER_VERB.finditer(narration):
        candidates.append((m.start(), m.group("who1")))
    for pattern, group in ((_BEFORE_VERB, "who2"), (_AND_VERB, "who4"), (_ASIDE_VERB, "who5")):
        pos, verbs = 0, set()
        while m := pattern.search(narration, pos):
            pos = m.start() + 1  # a subject refused, a shorter one before the same verb may do ("in his tone he said")
            if m.end() in verbs:
                continue
            before = narration[:m.start()].split()
            if before and before[-1].lower() in _PREPOSITIONS:  # "at the windows cried": not a subject
                continue
            who = m.group(group)
            if who.split()[0].lower() in DETERMINERS and descriptor_of(who).split() != who.split():
                continue  # "an Emperor who thought": the verb is not the descriptor's
            verbs.add(m.end())
            candidates.append((m.start(), who))
    for m in _FR_INVERTED.finditer(narration):
        candidates.append((m.start(), m.group("who3")))
    out: list[tuple[int, str, str]] = []
    for at, who in sorted(candidates):
        word = who.strip()
        if re.fullmatch(PRONOUN, word):
            out.append((at, word, "pronoun"))
        elif word in ("one", "another"):
            out.append((at, word, "name"))
        elif word.split()[0].lower() in DETERMINERS:
            d = descriptor_of(word)
            if d:
                out.append((at, d, "name"))
        elif is_name(clean_name(word)):
            out.append((at, clean_name(word), "name"))
    return out


def subjects_of(narration: str) -> list[str]:
    """People a piece of narration makes the subject of a verb ("A man entered", "the old lady
    put on", "Andrew Stuart reprit"), in order: who a following "he"/"she" most likely means."""
    out = []
    for m in _SUBJECT.finditer(narration):
        before = narration[:m.start()].split()
        if before and before[-1].lower() in _PREPOSITIONS:
            continue
        who = m.group("s")
        if who.split()[0].lower() in DETERMINERS:
            who = descriptor_of(who)
            kept = who.split()
            head = kept[kept.index("of") - 1] if "of" in kept[2:] else kept[-1] if kept else ""  # "the lord of the castle"
            if not head or not (head[0].isupper() or head.lower() in MALE | FEMALE | PERSONS):
                continue  # "the moon rose": not a person
        else:
            who = clean_name(who)
            if not is_name(who):
                continue
        out.append(who)
    return out
