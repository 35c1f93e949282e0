"""Emphasis on chosen words of a sentence, for voices that have no emphasis input.

Why this way: a Piper (VITS) voice takes text and three scales, nothing that says
"stress this word". What a listener hears as emphasis is mostly a word said longer
and louder (with a rise in pitch the model gives us no handle on). The engines that
cut the graph at the latent (:mod:`studio.engine.onnx.split`: ``fp32-cpu``,
``int8-cpu``, and ``bf16-cpu``, whose first half is the same ONNX encoder) hold the per-phoneme durations and the prior's mean and deviation in
numpy between the halves, so they can do what the model would do with longer
durations for those phonemes: repeat the phoneme's latent frames (the prior is
constant over a phoneme's frames, so this is exactly a longer duration) and draw
fresh noise for the new frames. The decoder then says the word longer with its own
voice; its samples are raised by :data:`GAIN_DB` with short ramps.

Which ids are a word: Piper separates espeak's words with the space phoneme, but
espeak joins some ("was the" -> ``wʌzðə``) and splits others ("fifty-one"), so the
groups between spaces need not count the words (and a join and a split can even
out). :func:`word_spans` phonemizes the sentence's prefixes (the words before the
word, then with it) and takes the groups the word adds. A word espeak joined to its
neighbour stresses the joined group (logged); where the prefix is said differently
from the sentence, the word said alone is looked for nearest its place, else its
place by count is kept (logged); a word past the sentence's groups is left
unstressed, with a warning -- the sentence still renders.
"""

from __future__ import annotations

import logging
from typing import Callable, Sequence

import numpy as np

_LOGGER = logging.getLogger(__name__)

#: how much longer an emphasized word's phonemes last
STRETCH = 1.2
#: how much louder its samples are (with :data:`RAMP_S` ramps in and out)
GAIN_DB = 3.0
RAMP_S = 0.02
#: the presets whose engines realize emphasis (the engines that decode the latent in windows, on
#: the CPU); the others render an emphasized sentence plainly and say so
HEARD_ON = ("fp32-cpu", "int8-cpu", "bf16-cpu")

#: the noise stream of the frames emphasis adds (:mod:`studio.engine.noise` uses 0 and 1)
EMPHASIS_NOISE = 2


def space_id(to_ids: Callable[[str], list[int]]) -> int | None:
    """The voice's word-separator id, read off its own front end ("ah" and "ah ah"), or None."""
    one, two = to_ids("ah"), to_ids("ah ah")
    cut = len(one) - 1
    if len(one) < 3 or len(two) != 2 * len(one) - 1 or two[:cut] != one[:-1] or two[cut + 1:] != one[1:]:
        return None
    return two[cut]


def groups(ids: Sequence[int], space: int) -> list[tuple[int, int]]:
    """The id spans between word separators (the first after the start symbol, the last before
    the end), leaving out spans of nothing but the pad id (Piper's ``^ _ p1 _ p2 ... $``: a
    clause that ends the text, "times, ", leaves one)."""
    pad = ids[1] if len(ids) > 2 else None
    cuts = [i for i, x in enumerate(ids) if x == space]
    starts, stops = [1] + [c + 1 for c in cuts], cuts + [len(ids) - 1]
    return [(a, b) for a, b in zip(starts, stops) if any(x != pad for x in ids[a:b])]


def word_spans(to_ids: Callable[[str], list[int]], text: str, words: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """The id spans of ``text``'s words ``words`` (indices into ``text.split()``), as described above.

    ``to_ids`` is the voice's front end for this sentence (language and lexicon bound)."""
    tokens = text.split()
    wanted = sorted({w for w in words if 0 <= w < len(tokens)})
    if not wanted:
        return ()
    space = space_id(to_ids)
    if space is None:
        _LOGGER.warning("emphasis: this voice's ids have no word separator; %r renders without emphasis", text[:60])
        return ()
    ids = to_ids(text)
    found = groups(ids, space)
    spans: list[tuple[int, int]] = []
    for w in wanted:
        before = len(_said(to_ids, " ".join(tokens[:w]), space)) if w else 0
        upto = _said(to_ids, " ".join(tokens[: w + 1]), space)
        if not upto or len(upto) > len(found):
            _LOGGER.warning("emphasis: cannot place %r in %r; left unstressed", tokens[w], text[:60])
            continue
        first = min(before, len(upto) - 1)
        if first < before:  # espeak joined it to the word before: the joined group is stressed
            _LOGGER.info("emphasis: %r is joined to its neighbour by espeak; the joined group is stressed", tokens[w])
        here = found[first:len(upto)]
        if [ids[a:b] for a, b in here] != upto[first:]:
            # the prefix is said differently from the sentence: the word said alone, nearest its place
            alone = _said(to_ids, tokens[w], space)
            hits = [k for k, (a, b) in enumerate(found) if len(alone) == 1 and ids[a:b] == alone[0]]
            if hits:
                k = min(hits, key=lambda k: abs(k - first))
                here = found[k:k + 1]
            else:
                _LOGGER.info("emphasis: %r placed by word count in %r (espeak says it differently there)",
                             tokens[w], text[:60])
        spans.append((here[0][0], here[-1][1]))
    return tuple(sorted(set(spans)))


def _said(to_ids: Callable[[str], list[int]], text: str, space: int) -> list[list[int]]:
    """The ids of each word group of ``text`` said on its own."""
    ids = to_ids(text)
    return [ids[a:b] for a, b in groups(ids, space)]


def stretch_plan(frames_per_id: np.ndarray, spans: Sequence[tuple[int, int]],
                 factor: float = STRETCH) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """Where each new latent frame comes from, once the ids of ``spans`` last ``factor`` times longer.

    Returns ``(source frame per new frame, new frames per id, new frame spans of the words)``;
    ``source`` is -1 where the frame is new (its noise is drawn fresh)."""
    frames_per_id = np.asarray(frames_per_id, dtype=np.int64)
    stressed = np.zeros(len(frames_per_id), dtype=bool)
    for a, b in spans:
        stressed[max(a, 0):min(b, len(frames_per_id))] = True
    new = np.where(stressed, np.floor(frames_per_id * factor + 0.5).astype(np.int64), frames_per_id)
    source: list[np.ndarray] = []
    offset = 0
    for d, n in zip(frames_per_id, new):
        own = np.arange(offset, offset + d)
        if n > d:  # the phoneme's frames, each repeated as evenly as n allows; the repeats marked new
            idx = own[(np.arange(n) * d) // n] if d else np.zeros(0, np.int64)
            fresh = np.ones(n, dtype=bool)
            fresh[np.searchsorted(idx, own)] = False
            source.append(np.where(fresh, -1 - idx, idx))
        else:
            source.append(own)
        offset += d
    starts = np.concatenate([[0], np.cumsum(new)])
    word_frames = [(int(starts[max(a, 0)]), int(starts[min(b, len(new))])) for a, b in spans]
    return (np.concatenate(source) if source else np.zeros(0, np.int64)), new, word_frames


def stretch_prior(mean: np.ndarray, std: np.ndarray, eps: np.ndarray, source: np.ndarray,
                  fresh_noise: Callable[[int, int], np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The prior ``[C, T]`` laid out by ``source`` (:func:`stretch_plan`): a new frame repeats its
    phoneme's mean and deviation and gets its own noise (``fresh_noise(channels, frames)``)."""
    origin = np.where(source < 0, -1 - source, source)
    new_eps = eps[:, origin].copy()
    added = np.flatnonzero(source < 0)
    if added.size:
        new_eps[:, added] = fresh_noise(eps.shape[0], int(added.size))
    return mean[:, origin], std[:, origin], new_eps


def louder_window(audio: np.ndarray, start_sample: int, louder: Sequence[tuple[int, int]],
                  sample_rate: int) -> np.ndarray:
    """One decoded window's audio (it starts at ``start_sample`` of its sentence) with the
    stressed words' spans raised."""
    env = gain_envelope(start_sample, start_sample + len(audio), louder, sample_rate) if louder else None
    return audio if env is None else apply_gain(audio, env)


def gain_envelope(start: int, stop: int, spans: Sequence[tuple[int, int]], sample_rate: int,
                  gain_db: float = GAIN_DB, ramp_s: float = RAMP_S) -> np.ndarray | None:
    """Per-sample gain over samples ``[start, stop)`` of a sentence: ``gain_db`` over each
    sample span in ``spans``, ramped in and out; None when no span touches the range."""
    if not any(a < stop and b > start for a, b in spans):
        return None
    g = 10 ** (gain_db / 20)
    ramp = max(1, int(ramp_s * sample_rate))
    t = np.arange(start, stop, dtype=np.float64)
    env = np.ones(stop - start, dtype=np.float64)
    for a, b in spans:
        rise = np.clip((t - a) / ramp, 0.0, 1.0)
        fall = np.clip((b - t) / ramp, 0.0, 1.0)
        env = np.maximum(env, 1.0 + (g - 1.0) * np.minimum(rise, fall))
    return env.astype(np.float32)


def apply_gain(audio: np.ndarray, env: np.ndarray) -> np.ndarray:
    """``audio * env`` with a soft knee above 0.9, so a raised word does not clip hard."""
    y = audio * env
    big = np.abs(y) > 0.9
    if big.any():
        y[big] = np.sign(y[big]) * (0.9 + 0.1 * np.tanh((np.abs(y[big]) - 0.9) / 0.1))
    return y
