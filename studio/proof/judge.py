"""From what was heard to flags a producer understands.

Why a flag needs more than a word error: Whisper base mishears clean synthetic
speech often (names, archaic words, British spellings: in the issue's trial
plain word counting flagged 32 of 40 clean sentences). A stretch where expected
and heard words differ is therefore only a *candidate*; it is dismissed when

* the heard words sound like the expected ones (espeak phonemes of both sides,
  :func:`~studio.proof.words.sound_alike`) -- "Queequeg" heard as "Quikwick";
* the expected words fit the audio when scored directly (forced alignment
  probability, :mod:`studio.proof.listen`) -- the recogniser just wrote
  something else;
* the words come from the project's lexicon (the producer chose how they sound)
  and the evidence against them is not strong;
* (``ratio``) the expected words are about as likely as the heard ones over the same
  audio: their teacher-forced log-probability per word (each expected word scored by
  its weakest spoken token) against the recogniser's own hypothesis. A misheard
  "in"/"and" is a near tie; a changed word is far behind;
* (``own_render``) the studio's own voice said it: a Piper/VITS voice says the
  phonemes it is given, so a short function word swapped, dropped or added is the
  recogniser's habit, not the voice's error. A recording (``--audio``, perhaps a
  human narrator) gets no such allowance.

What is never dismissed, because the voice did it: an expected word whose weakest
spoken token is nil in the forced scores and that the recogniser did not write
either ("missing"; also inside a stretch when the heard words sound like the rest
without it), and the same one to three words heard twice in a row where the text
does not repeat itself ("repeated", even when the run straddles the stretch the
word alignment calls different: "there is said" heard as "beras said said").

A sentence where most words fail both tests is one flag, "garbled or wrong-language
speech", not a dozen word flags. Sound faults (:mod:`studio.proof.signal`) become
flags of their own.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from studio.project.proofs import FLAGGED, PASSED, ProofFlag, ProofRecord
from studio.proof.listen import Heard, Word
from studio.proof.signal import SignalIssue
from studio.proof.sphinx import Repeat
from studio.proof.words import align_words, currency_guessed, numeral_name, phonemes, sound_alike, symbol_names


@dataclass(frozen=True)
class Thresholds:
    """The knobs of the judgement (calibrated with ``bench/proof.py``)."""

    alike: float = 0.6  # sound_alike at or above: the recogniser's spelling, not the voice's error
    fits: float = 0.10  # lowest forced probability of the stretch at or above: the expected words are in the audio
    fits_lexicon: float = 0.03  # the same for words the project's lexicon respells
    unlike: float = 0.2  # sound_alike below: the heard words have nothing of the expected ones
    fits_unlike: float = 0.2  # ... and then the expected words must fit at least this well
    heard_sure: float = 0.55  # an added word must be heard at least this surely
    garbled_share: float = 0.5  # share of expected words unconfirmed: garbled or wrong-language
    #: the same for a sentence of the studio's own voice the first pass hears unlike English throughout
    #: (:attr:`Heard.foreign`) and no word flagged, which then needs only ``foreign_least`` words
    #: unconfirmed: Whisper writes most of its words as English, and a changed word alone can take the
    #: sentence's score that low
    foreign_share: float | None = None
    foreign_least: int = 3
    min_sound: int = 3  # phonemes an unconfirmed stretch must carry to count (not "a", "the")
    ratio: float | None = None  # dismiss when log p(expected) - log p(heard) per word is at least -ratio
    ratio_fits: float = 1.0  # with ``ratio``: a stretch whose weakest expected word fits this well is dismissed
    function_words: bool = False  # own renders: a stretch of function words only is the recogniser's
    repeat_sure: float | None = None  # a repeated word is flagged when heard at least this surely
    drop_weakest: float | None = None  # an expected word whose weakest token is below this and is not heard: missing
    drop_gain: float | None = None  # ... also inside a stretch, when the heard words sound that much more like the rest
    repeat_ngram: bool = False  # the same one to three words heard twice in a row (not so in the text): repeated
    longer: float | None = None  # heard phonemes this many times the expected ones (and 4 more): words added
    ratio_weakest: bool = False  # the ratio scores each expected word by its weakest token, not its tokens' mean
    tie_nil: float | None = None  # no near tie when an expected word not heard has a token below this
    #: a stretch whose expected words score within this many nats per word of the heard ones (or fit at
    #: ``ratio_fits``) is not counted towards "garbled": the recogniser's spelling of an interjection
    differing_tie: float | None = None
    short: int = 0  # sentences of at most this many words are garbled only by words that fail every test
    symbols: bool = False  # a heard name of a symbol left in what the voice was given is flagged
    #: an interjection ("Huzza!", "Ha!") is weighed against the recogniser's guess by its tokens' mean: a rare
    #: spelling has one unlikely token even when said right
    interjections: bool = False


#: the judgement before issue 30 (kept to measure against: ``bench/proof.py``)
PREVIOUS = Thresholds()
#: set on the tuning half of the evaluation set (``bench/proof.py --tune``)
ROUND2 = Thresholds(heard_sure=0.4, ratio=5.0, ratio_fits=0.3, function_words=True, repeat_sure=0.3,
                    repeat_ngram=True, drop_weakest=0.003, drop_gain=0.1, ratio_weakest=True, tie_nil=1e-4)
DEFAULT = dataclasses.replace(ROUND2, symbols=True, interjections=True, foreign_share=0.15, foreign_least=2)
#: closed-class English words the recogniser swaps among themselves ("in"/"and", "that"/"it")
FUNCTION_WORDS = frozenset(
    "a an the and or but nor so yet in on at of to for from by with as into onto upon than then that this these "
    "those it its is was be are were been he she they we i you him her them us me his hers their our my your "
    "thee thou thy thine ye not no all some any there here when while if what which who whom whose had has have "
    "do did does shall will would should could can may might must unto".split())
#: flags about words, which a garbled sentence's one flag replaces
WORD_KINDS = frozenset({"missing", "substituted", "added", "repeated", "cut"})
#: flags a new synthesis can fix (the text and the lexicon are not at fault)
GLITCH_KINDS = frozenset({"garbled", "cut", "silence", "noise", "clipping", "repeated", "added", "missing"})
_SEVERITY = {"pronunciation": 1, "symbol": 2, "garbled": 3, "cut": 3, "missing": 2, "substituted": 2, "added": 2, "repeated": 2, "silence": 2,
             "clipping": 2, "noise": 2}


def _mean(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return float(np.mean(got)) if got else None


def _least(values: list[float | None]) -> float | None:
    """The weakest word decides: a changed word scores ~0 while its neighbours still fit."""
    got = [v for v in values if v is not None]
    return min(got) if got else None


def _span(words: list[Word]) -> tuple[float | None, float | None]:
    return (words[0].start, words[-1].end) if words else (None, None)


def _logp(words: list[Word], weakest: bool = False) -> float | None:
    """Mean log-probability per word (each word's own probability is its tokens' mean, or its weakest token's)."""
    got = [w.weakest if weakest and w.weakest is not None else w.probability for w in words
           if w.probability is not None]
    return float(np.mean(np.log(np.maximum(got, 1e-6)))) if got else None


def _near_tie(exp: list[Word], hrd: list[Word], context: list[Word], t: Thresholds,
              ratio: float | None = None) -> bool:
    """The ``ratio`` lever: the expected words score about as well as what the recogniser wrote."""
    ratio = t.ratio if ratio is None else ratio
    if ratio is None:
        return False
    if t.tie_nil is not None:  # one word the audio cannot hold at all: a mean over the stretch must not hide it
        heard = {w.text for w in hrd}
        if any(w.weakest is not None and w.weakest < t.tie_nil and w.text not in heard for w in exp):
            return False
    mine = _logp(exp or context, t.ratio_weakest)
    theirs = _logp(hrd)
    if mine is None or theirs is None:
        return False
    return mine - theirs >= -ratio


def _recogniser_habit(exp: list[Word], hrd: list[Word], own_render: bool, t: Thresholds) -> bool:
    """Own renders only: short function words swapped, dropped or added are the recogniser's doing."""
    if not (t.function_words and own_render):
        return False
    words = [w.text for w in exp + hrd]
    if exp and not hrd:  # a dropped word: the forced score says whether the voice said it
        return False
    return 0 < len(words) <= 3 and len(exp) <= 1 and len(hrd) <= 2 and all(w in FUNCTION_WORDS for w in words)


def _stutter(exp: list[Word], hrd: list[Word]) -> bool:
    """More words heard than expected, the same word twice in a row: "kicked kicked kicked" heard as "kick kick kick";
    or an expected word heard written twice as one ("fire fire" written "firefire")."""
    texts = [w.text for w in hrd]
    glued = {g for w in exp for g in (w.text * 2, f"{w.text}-{w.text}")}
    return len(hrd) > len(exp) and any(a == b for a, b in zip(texts, texts[1:])) or any(t in glued for t in texts)


def _repeated_run(expected: list[str], heard: list[Word], t: Thresholds, language: str = "en",
                  shouted: frozenset[str] = frozenset()) -> list[Word]:
    """Heard words that say the same one to three words twice in a row where the text does not.

    Why before the word alignment: a stutter heard as "said said" or "P&H P&H" straddles the
    stretch the alignment calls different ("there is said" heard as "beras said said").
    """
    if not t.repeat_ngram or t.repeat_sure is None:
        return []
    texts = [w.text for w in heard]
    joined = " " + " ".join(expected) + " "
    units = [(expected[i:i + n], 1) for n in (1, 2, 3) for i in range(len(expected) - 2 * n + 1)
             if expected[i:i + n] == expected[i + n:i + 2 * n]]  # the text's own repeats ("Alas! alas!"), once
    if t.interjections:
        units += [([w], 2) for w in dict.fromkeys(expected) if w in shouted]  # "Oho!" heard as "oh, oh", twice
    for n in (1, 2, 3):
        if any(expected[i:i + n] == expected[i + n:i + 2 * n] for i in range(len(expected) - 2 * n + 1)):
            continue  # the text repeats itself ("Jug Jug", "drip drop drop"): a heard run is its spelling
        for i in range(len(texts) - 2 * n + 1):
            run = texts[i:i + n]
            if run == texts[i + n:i + 2 * n] and f" {' '.join(run + run)} " not in joined \
                    and not any(sound_alike(u, run * times, language)
                                >= t.alike for u, times in units):  # "oh last oh last", "oh oh"
                words = heard[i:i + 2 * n]
                sure = _mean([w.probability for w in words])
                if sure is not None and sure >= t.repeat_sure:
                    return words
    return []


def _exclamation(exp: list[Word], hrd: list[Word], shouted: frozenset[str], language: str, t: Thresholds) -> bool:
    """An interjection the recogniser spelt its own way ("Huzza" as "hazaw", "Oho" as "oh, oh"): it sounds
    alike, or the audio fits it about as well as the guess, its tokens' mean weighed (a rare spelling has one
    unlikely token even when said right)."""
    if not exp or not hrd or len(exp) > 2 or len(hrd) > 2 * len(exp) or any(w.text not in shouted for w in exp):
        return False
    if sound_alike([w.text for w in exp], [w.text for w in hrd], language) >= t.alike:
        return True
    return _near_tie(exp, hrd, [], dataclasses.replace(t, ratio_weakest=False, tie_nil=None))


def _dropped(exp: list[Word], hrd: list[Word], language: str, t: Thresholds) -> Word | None:
    """An expected word the voice left out: its forced score is nil, and without it the rest sounds like what was heard."""
    if t.drop_weakest is None:
        return None
    weak = [w for w in exp if w.weakest is not None and w.weakest < t.drop_weakest]
    if not hrd:
        return weak[0] if weak else None
    if t.drop_gain is None or len(exp) <= len(hrd):
        return None
    heard = [w.text for w in hrd]
    base = sound_alike([w.text for w in exp], heard, language)
    for w in weak:
        rest = sound_alike([x.text for x in exp if x is not w], heard, language)
        if rest >= t.alike and rest - base >= t.drop_gain:
            return w
    return None


def _said_again(repeat: Repeat) -> ProofFlag:
    """The first pass's repeated word as a flag: Whisper's language model tends to write a word said
    twice once, so the aligner's hearing stands on its own."""
    said = " ".join([repeat.word.text] * repeat.times)
    times = "twice" if repeat.times == 2 else f"{repeat.times} times"
    return ProofFlag("repeated", _SEVERITY["repeated"], f"words repeated: \u201c{said}\u201d (the aligner hears "
                     f"\u201c{repeat.word.text}\u201d said {times})", "", said, repeat.word.start, repeat.word.end)


def judge(heard: Heard, language: str, signal: list[SignalIssue], *, lexicon_words: frozenset[str] = frozenset(),
          duration: float = 0.0, t: Thresholds = DEFAULT, own_render: bool = True,
          said: str = "", shouted: frozenset[str] = frozenset()) -> ProofRecord:
    """The verdict on one sentence (status, flags, score 0..100).

    ``own_render``: the studio's voice made the audio (False for ``--audio`` recordings). ``said``: the
    text the voice was given (its symbols' names heard are flagged, never dismissed as the recogniser's).
    ``shouted``: the sentence's interjections (:func:`~studio.proof.words.exclaimed`).
    """
    expected = list(heard.expected)
    texts = [w.text for w in heard.heard]
    expected_texts = {w.text for w in expected}
    got = [w for i, w in enumerate(heard.heard)
           if not numeral_name(texts, i) and not currency_guessed(texts, i, expected_texts)]
    flags: list[ProofFlag] = []
    unconfirmed = 0
    differing = 0  # expected words in stretches that do not even sound alike (garbled speech, whatever scores say)
    cut_off = any(issue.kind == "cut" for issue in signal)
    names = symbol_names(said, language) if t.symbols else {}
    run = _repeated_run([w.text for w in expected], got, t, language, shouted)
    if run:
        text = " ".join(w.text for w in run)
        flags.append(ProofFlag("repeated", _SEVERITY["repeated"], f"words repeated: \u201c{text}\u201d", "", text,
                               run[0].start, run[-1].end))
    for region in align_words([w.text for w in expected], [w.text for w in got]):
        exp, hrd = expected[region.e0:region.e1], got[region.h0:region.h1]
        exp_text, hrd_text = " ".join(w.text for w in exp), " ".join(w.text for w in hrd)
        named = [w for w in hrd if w.text in names and w.text not in expected_texts]
        if named:  # the voice read a symbol aloud: what it was given is at fault, whatever the scores say
            start, end = _span(named)
            flags.append(ProofFlag("symbol", _SEVERITY["symbol"], f"a symbol read aloud: \u201c{named[0].text}\u201d "
                                   f"for \u201c{names[named[0].text]}\u201d", exp_text, hrd_text, start, end))
            continue
        left_out = _dropped(exp, hrd, language, t)
        if left_out is not None:
            at_end = region.e1 == len(expected) and region.h1 == len(got) and region.e0 > 0 and not hrd
            kind = "cut" if at_end and cut_off else "missing"
            reason = (f"cut short: the last words \u201c{exp_text}\u201d are not heard" if kind == "cut"
                      else f"words missing: \u201c{left_out.text}\u201d")
            unconfirmed += 1
            flags.append(ProofFlag(kind, _SEVERITY[kind], reason, left_out.text, hrd_text, left_out.start, left_out.end))
            continue
        if t.interjections and _exclamation(exp, hrd, shouted, language, t):
            continue
        if t.longer is not None and hrd \
                and len(phonemes(hrd_text, language)) >= t.longer * len(phonemes(exp_text, language)) + 4:
            sure = _mean([w.probability for w in hrd])
            if sure is not None and sure >= t.heard_sure:
                start, end = _span(hrd)
                flags.append(ProofFlag("added", _SEVERITY["added"], f"words added: expected \u201c{exp_text}\u201d, "
                                       f"heard \u201c{hrd_text}\u201d", exp_text, hrd_text, start, end))
                continue
        before = {w.text for w in expected[max(0, region.e0 - 2):region.e1 + 2]}
        repeated = bool(hrd) and not exp and all(w.text in before for w in hrd)
        if repeated and t.repeat_sure is not None or t.repeat_sure is not None and _stutter(exp, hrd):
            sure = _mean([w.probability for w in hrd])
            if sure is not None and sure >= t.repeat_sure:
                start, end = _span(hrd)
                flags.append(ProofFlag("repeated", _SEVERITY["repeated"], f"words repeated: \u201c{hrd_text}\u201d",
                                       "", hrd_text, start, end))
                continue
        if _recogniser_habit(exp, hrd, own_render, t):
            continue
        fits = _least([w.probability for w in exp])
        lexical = any(w.text in lexicon_words for w in exp)
        alike = sound_alike([w.text for w in exp], [w.text for w in hrd], language) if exp and hrd else None
        if alike is not None and alike >= t.alike:
            continue
        if t.differing_tie is None or not (exp and hrd and _near_tie(exp, hrd, [], t, t.differing_tie)
                                           or fits is not None and fits >= t.ratio_fits):
            differing += len(exp)
        if t.ratio is not None and exp and hrd:
            if _near_tie(exp, hrd, [], t) or (fits is not None and fits >= t.ratio_fits):
                continue
        else:
            floor = t.fits_lexicon if lexical else t.fits
            if alike is not None and alike < t.unlike:
                floor = max(floor, t.fits_unlike)  # nothing alike: weaker evidence for the expected words suffices
            if exp and fits is not None and fits >= floor:
                continue
        if exp and len(phonemes(exp_text, language)) < t.min_sound and len(phonemes(hrd_text, language)) < t.min_sound:
            continue  # "a" dropped or heard as "the": the recogniser's habit, and a listener barely notices
        if not exp:
            sure = _mean([w.probability for w in hrd])
            if (sure is not None and sure < t.heard_sure) or len(phonemes(hrd_text, language)) < t.min_sound:
                continue
            kind = "repeated" if repeated else "added"
            start, end = _span(hrd)
            flags.append(ProofFlag(kind, _SEVERITY[kind], f"words {kind}: \u201c{hrd_text}\u201d", "", hrd_text,
                                   start, end))
            continue
        unconfirmed += len(exp)
        start, end = _span(hrd or exp)
        at_end = region.e1 == len(expected) and region.h1 == len(got) and region.e0 > 0
        if at_end and len(hrd) < len(exp) and (not hrd or cut_off):
            kind = "cut"  # the sentence stops early: at most a fragment of its last words is heard
            reason = f"cut short: the last words \u201c{exp_text}\u201d are not heard"
            flags.append(ProofFlag(kind, _SEVERITY[kind], reason, exp_text, hrd_text, start, end))
        elif not hrd:
            kind = "missing"
            flags.append(ProofFlag(kind, _SEVERITY[kind], f"words missing: \u201c{exp_text}\u201d", exp_text, "",
                                   start, end))
        else:
            flags.append(ProofFlag("substituted", _SEVERITY["substituted"],
                                   f"words substituted: expected \u201c{exp_text}\u201d, heard \u201c{hrd_text}\u201d",
                                   exp_text, hrd_text, start, end))
    lost = max(unconfirmed, differing) if t.ratio is not None and len(expected) > t.short else unconfirmed
    # the studio's voice unlike English, no word flagged: Whisper wrote it as English and each stretch was
    # dismissed (a recording's narrator may simply not speak US English, whose sounds the aligner knows)
    foreign = heard.foreign and own_render and t.foreign_share is not None \
        and not any(f.kind in WORD_KINDS for f in flags)
    share, least = (t.foreign_share, t.foreign_least) if foreign else (t.garbled_share, 3)
    if expected and (lost >= least or len(expected) < 6) and lost / len(expected) >= share:
        unconfirmed = lost
        flags = [f for f in flags if f.kind not in WORD_KINDS]
        unlike = ", and the whole sentence sounds unlike English" if foreign else ""
        flags.insert(0, ProofFlag("garbled", 3, f"garbled or wrong-language speech: {unconfirmed} of "
                                  f"{len(expected)} words not recognised{unlike}", " ".join(w.text for w in expected),
                                  heard.raw, 0.0, duration or None))
    if heard.repeated is not None and not any(f.kind in ("repeated", "garbled") for f in flags):
        flags.append(_said_again(heard.repeated))
    for issue in signal:
        if issue.kind == "cut" and any(f.kind == "cut" for f in flags):
            continue
        flags.append(ProofFlag(issue.kind, _SEVERITY[issue.kind], issue.reason, "", "", issue.start, issue.end))
    confirmed = 1.0 - unconfirmed / len(expected) if expected else 1.0
    score = round(100.0 * confirmed * (0.8 ** len(signal)), 1)
    flags = list({f.reason: f for f in flags}.values())  # "forests" misheard twice is one thing to hear
    flags.sort(key=lambda f: -f.severity)
    return ProofRecord(FLAGGED if flags else PASSED, max((f.severity for f in flags), default=0), score,
                       heard.raw, tuple(flags))
