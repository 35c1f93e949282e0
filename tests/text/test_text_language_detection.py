"""The detector behind assign_languages: script first, lingua, the book's and the
neighbours' language as a prior, determinism, and accuracy on held-out passages."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from studio.core.types import UnvoicedPolicy
from studio.text import detector
from studio.text.inspect import speaking_languages
from studio.text.detector import clear_cache
from studio.text.language import assign_languages, detect_language
from studio.text.scripts import dominant_script

ENGLISH = (
    "The harbour was quiet that morning and the boats rocked gently against the wall. "
    "Nobody in the village could remember a calmer sea at this time of the year."
)
GERMAN = (
    "Der Hafen war an diesem Morgen ruhig und die Boote schaukelten sanft an der Mauer. "
    "Niemand im Dorf konnte sich an ein so ruhiges Meer zu dieser Jahreszeit erinnern."
)
ITALIAN = (
    "Il porto era tranquillo quella mattina e le barche dondolavano piano contro il muro. "
    "Nessuno in paese ricordava un mare cos\u00ec calmo in questo periodo dell'anno."
)


def codes(chapters: list[list[str]], **kwargs: object) -> list[str]:
    return [code for ch in assign_languages(chapters, **kwargs)[1] for code, _ in ch]


@pytest.mark.parametrize(
    "text, script, code",
    [
        ("\u039a\u03b1\u03bb\u03b7\u03bc\u03ad\u03c1\u03b1 \u03c3\u03b1\u03c2, \u03c6\u03af\u03bb\u03bf\u03b9.", "Greek", "el"),
        ("\uc548\ub155\ud558\uc138\uc694 \uc5ec\ub7ec\ubd84", "Hangul", "ko"),
        ("\u3053\u3093\u306b\u3061\u306f\u3001\u7686\u3055\u3093\u3002\u5143\u6c17\u3067\u3059\u304b\u3002", "Kana", "ja"),
        ("\u4eca\u5929\u5929\u6c14\u5f88\u597d\u3002", "Han", "zh"),
        ("\u05e9\u05dc\u05d5\u05dd \u05dc\u05db\u05d5\u05dc\u05dd", "Hebrew", "he"),
    ],
)
def test_a_script_of_its_own_decides_without_any_model(monkeypatch: pytest.MonkeyPatch, text: str, script: str, code: str) -> None:
    clear_cache()

    def no_model(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a statistical model was consulted")

    monkeypatch.setattr(detector, "_detector", no_model)
    assert dominant_script(text) == script
    assert detect_language(text) == (code, 1.0)


def test_shared_scripts_narrow_the_field() -> None:
    assert detect_language("\u0414\u043e\u0431\u0440\u044b\u0439 \u0432\u0435\u0447\u0435\u0440, \u0434\u0440\u0443\u0437\u044c\u044f.")[0] == "ru"
    assert detect_language("\u0414\u043e\u0431\u0440\u0438\u0439 \u0432\u0435\u0447\u0456\u0440, \u0434\u0440\u0443\u0437\u0456, \u044f\u043a \u0441\u043f\u0440\u0430\u0432\u0438?")[0] == "uk"
    assert dominant_script("Hello, world") == "Latin" and dominant_script("1914 !!!") == ""
    # restricted candidates: Czech cannot come out when only Slovak and English are possible
    assert detect_language("P\u0159\u00edli\u0161 \u017elu\u0165ou\u010dk\u00fd k\u016f\u0148 \u00fap\u011bl \u010f\u00e1belsk\u00e9 \u00f3dy.", frozenset({"sk", "en"}))[0] == "sk"


def test_the_book_language_is_a_prior_a_short_line_must_clearly_overcome() -> None:
    line = "Alles war so still, so still."
    alone = detect_language(line)[0]
    assert alone != "de"  # on its own, this short German line is misread...
    assert codes([[GERMAN, line, GERMAN]]) == ["de", "de", "de"]  # ...in a German book it is German
    # a clear foreign sentence still wins over the book's language
    assert codes([[ENGLISH, "Der Hafen war an diesem Morgen ruhig und still.", ENGLISH]]) == ["en", "de", "en"]


def test_neighbours_steer_short_passages() -> None:
    line = "Ed eccoci alle donne."
    assert detect_language(line)[0] != "it"
    chapter = [ENGLISH, ITALIAN, line, ITALIAN, ENGLISH, ENGLISH, ENGLISH]
    book, langs = assign_languages([chapter])
    assert book == "en"
    assert [c for c, _ in langs[0]] == ["en", "it", "it", "it", "en", "en", "en"]


def test_declared_language_and_candidates_are_normalized() -> None:
    book, langs = assign_languages([[ENGLISH], [ITALIAN]], declared="it_IT", languages=frozenset({"EN", "it-IT"}))
    assert book == "it" and [ch[0][0] for ch in langs] == ["en", "it"]


def test_same_book_same_answers_after_clearing_caches() -> None:
    chapters = [[ENGLISH, "Oui.", GERMAN, "Alles war so still.", ITALIAN, "1914"]]
    clear_cache()
    first = assign_languages(chapters)
    clear_cache()
    assert assign_languages(chapters) == first
    detector.release_models()  # the models unloaded: loaded again on the next need, same answers
    assert assign_languages(chapters) == first


@pytest.mark.parametrize(
    "policy, expected",
    [(UnvoicedPolicy.NATIVE_PHONEMES, ("en", "de")), (UnvoicedPolicy.BOOK_LANGUAGE, ("en", "en")), (UnvoicedPolicy.SKIP, None)],
)
def test_unvoiced_policy(policy: UnvoicedPolicy, expected: tuple[str, str] | None) -> None:
    assert speaking_languages("de", "en", {"en_US"}, policy) == expected
    assert speaking_languages("fr", "en", {"en_US", "fr_FR"}, policy) == ("fr", "fr")
    assert UnvoicedPolicy("skip") is UnvoicedPolicy.SKIP


FORTUNES = Path("/usr/share/games/fortunes")


@pytest.mark.slow
@pytest.mark.skipif(not (FORTUNES / "de").is_dir() or not (FORTUNES / "cs").is_dir(),
                    reason="needs Debian's fortune packages (see bench/language_corpus.py)")
def test_accuracy_targets_on_a_compact_held_out_subset() -> None:
    """12 held-out passages per language: all but one passage, >= 97 % of first sentences,
    >= 98 % of mixed books' paragraphs (bench/language_eval.py runs the full set).
    Most of its time is loading the language models once."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import language_corpus
    import language_eval

    _dev, test, _dropped = language_corpus.build(per_language=12)
    assert len(test) == 12 * len(language_corpus.LANGUAGES)
    assert sum(detect_language(t)[0] == want for want, t in test) >= len(test) - 1
    sentences = sum(detect_language(language_corpus.first_sentence(t))[0] == want for want, t in test)
    assert sentences >= 0.97 * len(test)
    right = total = 0
    for chapters, truth in language_eval.mixed_books(test, paragraphs=16):
        got = [c for ch in assign_languages(chapters)[1] for c, _ in ch]
        want = [c for ch in truth for c in ch]
        right += sum(g == w for g, w in zip(got, want))
        total += len(want)
    assert right >= 0.98 * total
