"""Proof any recording against its text: where each sentence is, and what is wrong with it.

Why in two passes: a chapter recorded by a narrator (or rendered elsewhere) comes
as one file, so first the whole recording is transcribed with word times (speech
activity detection on, so a long pause after a heading cannot make the recogniser
lose the sentences after it) and the heard words are matched to the text's words.
Each boundary between two sentences is then put in the pause between the last
word of one and the first word of the next, found in the sound itself (the
quietest stretch there), so a piece never starts or ends inside a sound;
sentences with no matched word share the stretch between their neighbours by
length, again cut in pauses. Then each sentence's stretch of audio goes through
the same checker as a project's sentences, so the flags mean the same thing,
except that an inner boundary is never "cut short": the next sentence starts there.
A render of the studio's own comes with its subtitles, which already know where
each sentence is: given them, the sentences are cut at their cues' times and only
sentences no cue holds are found by listening.
What is expected is the text as given: no lexicon or spoken form stands behind it.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from studio.audio.resample import resample
from studio.core.errors import StudioError
from studio.project.proofs import PASSED, ProofFlag, ProofRecord
from studio.proof.check import Checker, ProofItem
from studio.proof.listen import whisper_language
from studio.proof.windows import RATE
from studio.proof.words import normalize_words



#: quiet kept before and after a sentence's sound when its piece is checked
EDGE_S = 0.15
#: how far the recogniser's word times may be off when a boundary's pause is looked for
SLACK_S = 0.1
#: quiet kept either side of a subtitle cue (at most half the gap to the next cue)
CUE_PAD_S = 0.25


@dataclass(frozen=True)
class TimedVerdict:
    """One sentence of a recording: its place (seconds) and its verdict."""

    index: int
    text: str
    start: float
    end: float
    record: ProofRecord


def read_sentences(path: Path) -> list[str]:
    """The text file's sentences (paragraphs split the way the studio splits manuscripts)."""
    from studio.text.segment import is_speakable, split_paragraphs, split_sentences

    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as err:
        raise StudioError(f"cannot read the text {path}: {err}") from err
    return [s.text for para in split_paragraphs(text) for s in split_sentences(para) if is_speakable(s.text)]


def proof_recording(checker: Checker, audio_path: Path, sentences: list[str], language: str,
                    cues: list[tuple[float, float, str]] | None = None, *,
                    own_render: bool = False) -> list[TimedVerdict]:
    """Every sentence of ``sentences`` located in the recording and checked.

    ``cues``: the recording's subtitles (``(start, end, text)``, as the studio exports them
    for its renders); a sentence their words match is cut at their times, the others are
    found by listening as without them. ``own_render``: the studio's own voice made it, so
    it is judged as project proofing judges (a swapped short word is the recogniser's).
    """
    from studio.audio.measure import read_audio

    if whisper_language(language) is None:
        raise StudioError(f"the speech model does not know language {language!r}; this recording cannot be checked")
    audio, rate = read_audio(audio_path)
    mono = np.asarray(audio, np.float32).reshape(-1)
    if mono.size == 0:
        raise StudioError(f"{audio_path} holds no audio")
    total = len(mono) / rate
    pieces: list[tuple[float, float, float, float] | None] = [None] * len(sentences)
    if cues:
        pieces = _from_cues(sentences, cues, total, language)
        if sum(p is not None for p in pieces) < len(sentences) / 2:
            raise StudioError(f"the subtitles do not belong to this text: {sum(p is not None for p in pieces)} of "
                              f"{len(sentences)} sentences found in them")
    if any(p is None for p in pieces):
        found = _from_speech(checker, mono, rate, sentences, total, language)
        pieces = [p if p is not None else f for p, f in zip(pieces, found)]
    items = [ProofItem(mono[int(a * rate):max(int(a * rate) + 1, int(b * rate))], rate, text, language,
                       own_render=own_render) for text, (a, b, _s, _e) in zip(sentences, pieces)]  # type: ignore[misc]
    records = checker.check(items)
    # a window the recogniser stopped decoding early ("CHAPTER IV", then nothing) leaves its other
    # sentences unheard: each such sentence is heard again on its own; a real garble stays garbled
    for k, rec in enumerate(records):
        if any(f.kind == "garbled" for f in rec.flags):
            records[k] = checker.check([items[k]])[0]
    last = len(sentences) - 1
    records = [rec if k == last else _no_inner_cut(rec) for k, rec in enumerate(records)]
    return [TimedVerdict(i, text, round(piece[2], 2), round(piece[3], 2), rec)  # type: ignore[index]
            for i, (text, piece, rec) in enumerate(zip(sentences, pieces, records))]


def _from_cues(sentences: list[str], cues: list[tuple[float, float, str]], total: float,
               language: str) -> list[tuple[float, float, float, float] | None]:
    """Each sentence's piece (start, end to check; start, end of its sound) from the subtitles.

    Why no search for pauses: the studio's cues start and end where its sentences'
    sound does (found by level in the delivered file), so the piece is the cue with a
    little quiet either side, never more than half the gap to the next cue (a heading's
    cue the text lacks stays out of both neighbours). A cue the words of two sentences
    share (the text split differently) gives neither a piece: they are found by listening.
    """
    cues = sorted(cues)
    spans = _locate(sentences, [(w, a, b) for a, b, text in cues for w in normalize_words(text, language)], total,
                    language)
    owners = [{k for k, (a, b, _t) in enumerate(cues) if span is not None and a < span[1] and b > span[0]}
              for span in spans]
    out: list[tuple[float, float, float, float] | None] = []
    for n, span in enumerate(spans):
        mine = owners[n]
        shared = any(mine & owners[m] for m in (n - 1, n + 1) if 0 <= m < len(spans))
        if span is None or not mine or shared:
            out.append(None)
            continue
        first, last = min(mine), max(mine)
        before = cues[first - 1][1] if first else 0.0
        after = cues[last + 1][0] if last + 1 < len(cues) else total
        start, end = cues[first][0], cues[last][1]
        out.append((max(0.0, start - min(CUE_PAD_S, (start - before) / 2)),
                    min(total, end + min(CUE_PAD_S, (after - end) / 2)), start, end))
    return out


def _from_speech(checker: Checker, mono: np.ndarray, rate: int, sentences: list[str], total: float,
                 language: str) -> list[tuple[float, float, float, float]]:
    """Each sentence's piece (start, end to check; start, end of its sound) found by listening."""
    from studio.audio.measure import quiet_edges

    audio16 = resample(mono, rate, RATE)
    heard = _heard_words(checker, audio16, language)
    spans = _locate(sentences, heard, total, language)
    spans = _fill_gaps(checker, audio16, sentences, spans, total, language)
    cuts = _boundaries(mono, rate, sentences, spans, total)
    out = []
    for k in range(len(sentences)):
        a, b = cuts[k], cuts[k + 1]
        piece = mono[int(a * rate):int(b * rate)]
        head, tail = quiet_edges(piece, rate) if piece.size else (0.0, 0.0)
        sound = (a + min(head, b - a), max(a + min(head, b - a), b - tail))
        if head >= b - a:  # nothing louder than the quiet: checked whole
            out.append((a, b, *sound))
            continue
        # a heading's long pause before it (or a long one after) is left out: the recogniser
        # loses speech that follows seconds of silence in its window
        out.append((a + max(0.0, head - EDGE_S), max(a + max(0.0, head - EDGE_S) + 1 / rate, b - max(0.0, tail - EDGE_S)),
                    *sound))
    return out


def _no_inner_cut(record: ProofRecord) -> ProofRecord:
    """An inner boundary runs into the next sentence: its loud last frames are not a cut, and
    last words not heard are missing words (the recording goes on), not a sentence cut short."""
    flags = tuple(f if f.kind != "cut" else ProofFlag("missing", 2, f"words missing: \u201c{f.expected}\u201d",
                                                      f.expected, f.heard, f.start, f.end)
                  for f in record.flags if not (f.kind == "cut" and not f.expected))
    if flags == record.flags:
        return record
    status = record.status if flags else PASSED
    return ProofRecord(status, max((f.severity for f in flags), default=0), record.score, record.heard, flags,
                       record.note, record.model)


def _fill_gaps(checker: Checker, audio16: np.ndarray, sentences: list[str], spans: list[tuple[float, float] | None],
               total: float, language: str) -> list[tuple[float, float] | None]:
    """Sentences none of whose words the whole-recording pass matched: that stretch transcribed again alone.

    Why: over a long recording the recogniser now and then skips a stretch of speech
    (a 30 s chunk decoded short); the words are there, and a second look at just the
    stretch between the neighbours it did place finds them.
    """
    out = list(spans)
    k = 0
    while k < len(out):
        if out[k] is not None:
            k += 1
            continue
        j = k
        while j < len(out) and out[j] is None:
            j += 1
        a = out[k - 1][1] if k and out[k - 1] is not None else 0.0  # type: ignore[index]
        b = out[j][0] if j < len(out) and out[j] is not None else total  # type: ignore[index]
        if b - a > 0.5:
            piece = audio16[int(a * RATE):int(b * RATE)]
            words = [(t, s + a, e + a) for t, s, e in _heard_words(checker, piece, language)]
            found = _locate(sentences[k:j], words, b, language)
            for m, span in enumerate(found):
                out[k + m] = span
        k = j
    return out


def _heard_words(checker: Checker, audio16: np.ndarray, language: str) -> list[tuple[str, float, float]]:
    model = checker.listener.model
    segments, _info = model.transcribe(audio16, language=whisper_language(language), beam_size=1,
                                       word_timestamps=True, condition_on_previous_text=False, vad_filter=True,
                                       vad_parameters={"min_silence_duration_ms": 700, "speech_pad_ms": 200})
    out = []
    for seg in segments:
        for w in seg.words or []:
            out += [(t, float(w.start), float(w.end)) for t in normalize_words(w.word, language)]
    return out


def _quietest(levels: np.ndarray, a: float, b: float, frame: float) -> float:
    """The middle of the quietest 100 ms between ``a`` and ``b`` seconds (a pause between two sentences)."""
    i, j = int(a / frame), max(int(a / frame) + 1, int(b / frame))
    window = levels[i:j]
    if window.size == 0:
        return a
    run = min(10, window.size)
    smooth = np.convolve(window, np.ones(run) / run, mode="valid")
    low = int(np.argmin(smooth)) + run // 2
    # the middle of the whole quiet stretch around it (within 6 dB of its floor), not an edge of it
    floor = float(window[min(low, window.size - 1)]) + 6.0
    lo = hi = min(low, window.size - 1)
    while lo > 0 and window[lo - 1] <= floor:
        lo -= 1
    while hi < window.size - 1 and window[hi + 1] <= floor:
        hi += 1
    return (i + (lo + hi + 1) / 2) * frame


def _boundaries(mono: np.ndarray, rate: int, sentences: list[str], spans: list[tuple[float, float] | None],
                total: float) -> list[float]:
    """Cut points (seconds), one before each sentence and one at the end, each in a pause."""
    from studio.proof.signal import FRAME_S, frame_db

    levels = frame_db(mono, rate)
    n = len(sentences)
    cuts: list[float | None] = [0.0] + [None] * (n - 1) + [total]
    for k in range(1, n):
        before, after = spans[k - 1], spans[k]
        if before is not None and after is not None and after[0] >= before[1] - 0.05:
            cuts[k] = _quietest(levels, max(0.0, before[1] - SLACK_S), min(total, max(after[0], before[1]) + SLACK_S),
                                FRAME_S)
    known = [k for k, c in enumerate(cuts) if c is not None]
    for p, q in zip(known, known[1:]):
        pos, end = float(cuts[p]), float(cuts[q])  # type: ignore[arg-type]
        for m in range(p + 1, q):
            prev, mine = spans[m - 1], spans[m]
            if prev is not None and prev[1] > pos:  # the sentence before ends at its last matched word
                a, b = prev[1] - 0.1, prev[1] + 0.8
            elif mine is not None:  # this one starts at its first matched word
                a, b = mine[0] - 0.8, mine[0] + 0.1
            else:  # neither: a share of the stretch left, by length
                lens = [len(sentences[i]) for i in range(m - 1, q)]
                guess = pos + (end - pos) * lens[0] / max(1, sum(lens))
                a, b = guess - 0.6, guess + 0.6
            pos = _quietest(levels, max(pos, a), max(min(end, b), max(pos, a) + 0.05), FRAME_S)
            cuts[m] = pos
    return [float(c) for c in cuts]  # type: ignore[arg-type]


def _locate(sentences: list[str], heard: list[tuple[str, float, float]], total: float,
            language: str) -> list[tuple[float, float] | None]:
    """Each sentence's first and last matched word times (None: no word of it was matched)."""
    owner: list[int] = []
    expected: list[str] = []
    for k, text in enumerate(sentences):
        words = normalize_words(text, language)
        expected += words
        owner += [k] * len(words)
    matcher = difflib.SequenceMatcher(None, expected, [h[0] for h in heard], autojunk=False)
    times: list[list[float]] = [[] for _ in sentences]
    for block in matcher.get_matching_blocks():
        for d in range(block.size):
            _, start, end = heard[block.b + d]
            times[owner[block.a + d]] += [start, end]
    return [(min(t), min(total, max(t))) if t else None for t in times]
