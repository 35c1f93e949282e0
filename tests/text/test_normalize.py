"""Text normalisation: the labelled set's accuracy targets, spoken forms through the real
phonemizer (espeak-ng under the bundled Piper voice), lexicon entries winning, and the
spoken form as what the audio cache key covers, overridable per sentence in a project."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from studio.measure.normalize_score import LANGUAGES, load_items, score, wrong
from studio.core.lexicon import Lexicon, LexiconEntry
from studio.project.settings import ProjectSettings
from studio.project.store import Project
from studio.project.cache import VoiceIdentity, cache_key
from studio.project.schema import SCHEMA_VERSION
from studio.text.normalize import spoken_form
from support.render import make_book, para

VOICE = "en_US-joe-medium"


@lru_cache(maxsize=1)
def _front_end():
    from studio.engine.voice.catalog import get_voice
    from studio.engine.voice.config import VoiceConfig
    from studio.engine.voice.phonemize import PiperFrontEnd

    return PiperFrontEnd(VoiceConfig.from_file(get_voice(None).config_path))


def phonemes(text: str, language: str = "en", lexicon: Lexicon | None = None) -> str:
    return "".join(_front_end().phonemize(text, language, lexicon))


def test_labelled_set_meets_the_targets() -> None:
    items = load_items()
    assert len(items) >= 400 and {i.language for i in items} == set(LANGUAGES)
    results = score(items, spoken_form)
    misses = "\n".join(f"{i.language}/{i.category}: {i.text!r} -> {said!r}" for i, said in wrong(items, spoken_form))
    right, total = results[("en", "all")]
    assert right / total >= 0.95, misses
    for (lang, category), (right, total) in results.items():
        assert right / total >= 0.90, f"{lang}/{category}: {right}/{total}\n{misses}"


def test_the_printed_text_alone_fails_the_set() -> None:
    """The set measures something: text passed through unchanged gets most of it wrong."""
    right, total = score(load_items(languages=["en"]), lambda text, lang: text)[("en", "all")]
    assert right / total < 0.5


#: one sentence per category: espeak-ng must say the spoken form as a narrator would
SAID_RIGHT = [
    ("number", "About 250,000 people fled.", "About two hundred fifty thousand people fled."),
    ("year", "She was born in 1907.", "She was born in nineteen oh seven."),
    ("decade", "It was the 1920s.", "It was the nineteen twenties."),
    ("range", "See pp. 12-15 for details.", "See pages twelve to fifteen for details."),
    ("date", "It happened on January 5, 2020.", "It happened on January fifth, twenty twenty."),
    ("ordinal", "It was his 21st birthday.", "It was his twenty-first birthday."),
    ("money", "The loan was €300 million.", "The loan was three hundred million euros."),
    ("percent", "Some 40-50% were lost.", "Some forty to fifty percent were lost."),
    ("time", "Wake me at 6:05 a.m.", "Wake me at six oh five AM."),
    ("fraction", "Use 3 1/2 pounds of meat.", "Use three and a half pounds of meat."),
    ("roman", "Henry VIII had six wives.", "Henry the Eighth had six wives."),
    ("abbreviation", "He lived at No. 10.", "He lived at number ten."),
    ("unit", "They drove at 60 km/h.", "They drove at sixty kilometers per hour."),
    ("acronym", "The FBI arrived.", "The F B I arrived."),
    ("symbol", "Room #5 is free.", "Room number five is free."),
    ("phone", "Call 555-123-4567 now.", "Call five five five, one two three, four five six seven now."),
    ("url", "Visit www.example.com today.", "Visit w w w dot example dot com today."),
]


@pytest.mark.parametrize("category,printed,narrated", SAID_RIGHT, ids=[c for c, _, _ in SAID_RIGHT])
def test_each_category_is_said_as_a_narrator_says_it(category: str, printed: str, narrated: str) -> None:
    spoken = spoken_form(printed, "en")
    assert phonemes(spoken) == phonemes(narrated), (category, spoken)
    if category != "acronym":  # the phonemizer applies the capitals decision itself (tests/text/test_capitals.py)
        assert phonemes(printed) != phonemes(narrated), "espeak-ng already said this right: the case tests nothing"


@pytest.mark.parametrize("language,printed,narrated", [
    ("de", "Am 3. Mai 2020 kostete es 12,50 €.", "Am dritten Mai zweitausendzwanzig kostete es zwölf Euro und fünfzig Cent."),
    ("fr", "M. Dupont paya 25 % de plus le 1er mai.", "Monsieur Dupont paya vingt-cinq pour cent de plus le premier mai."),
    ("es", "El Sr. García vive en el 2º piso desde 1984.", "El señor García vive en el segundo piso desde mil novecientos ochenta y cuatro."),
    ("it", "Il Dott. Rossi pagò 300 milioni € nel 1907.", "Il dottor Rossi pagò trecento milioni di euro nel millenovecentosette."),
])
def test_other_languages_through_their_phonemizer(language: str, printed: str, narrated: str) -> None:
    spoken = spoken_form(printed, language)
    assert phonemes(spoken, language) == phonemes(narrated, language), spoken


#: (sentence, the word's phonemes espeak-ng must produce) for heteronyms in the other reading
HETERONYM_SOUNDS = [
    ("He wound the clock every night.", "wˈaʊnd"),
    ("I read it yesterday.", "ɹˈɛd"),
    ("The pipes were made of lead.", "lˈɛd"),
    ("He had to bow to the king.", "bˈaʊ"),
    ("Please close the door.", "klˈoʊz"),
    ("Wind the rope around the post.", "wˈaɪnd"),
    ("Let me present the winner.", "pɹɪzˈɛnt"),
    ("They had a blazing row with the neighbours.", "ɹˈaʊ"),
    ("The minute details mattered.", "maɪnˈuːt"),
    ("Do not desert them now.", "dɪzˈɜːt"),
    ("He dove into the lake.", "dˈoʊv"),
    ("They caught a sea bass.", "bˈæs"),
    ("The does grazed quietly.", "dˈoʊz"),
    ("The old sow slept.", "sˈaʊ"),
    ("Please excuse me.", "kjˈuːz"),
]


@pytest.mark.parametrize("sentence,sound", HETERONYM_SOUNDS, ids=[s for s, _ in HETERONYM_SOUNDS])
def test_heteronyms_are_said_in_the_other_reading(sentence: str, sound: str) -> None:
    assert sound not in phonemes(sentence), "espeak-ng already reads it so: the case tests nothing"
    assert sound in phonemes(spoken_form(sentence, "en"))


def test_heteronym_table_has_fifty_words_and_leaves_the_usual_reading_alone() -> None:
    from studio.text.normalize.heteronyms import HETERONYMS, PROPER

    assert len(HETERONYMS) + len(PROPER) >= 50
    for sentence in ("The wound healed slowly.", "A tear rolled down her cheek.", "The wind was cold.",
                     "He broke the world record.", "An object fell from the sky."):
        assert spoken_form(sentence, "en") == sentence


#: (printed sentence, the respelling the context calls for, or the word left as printed)
HETERONYM_CONTEXTS = [
    ('"It is magnificent!" was the cry that went from mouth to mouth.', "mouth"),  # the same noun either side of "to"
    ("They searched the town from house to house.", "house"),
    ("He would mouth the words.", "mouthe"),
    ('"But the book in which I read this," said the Emperor, "was sent to me."', "red"),  # a past auxiliary after "I read"
    ("I read, much of the night, and go south in the winter.", "read"),
    ("Did you read it when you were young?", "read"),  # an auxiliary before the subject: the plain verb
    ("But it wound away into the heart of the forest.", "wownd"),
    ("The path wound down to the sea.", "wownd"),
    ("They bent down to the canal that wound through the region.", "wownd"),
    ("Those who wound others are wounded in turn.", "wound"),  # present tense, /wuːnd/
    ("That wound will heal.", "wound"),
    ('"This broken lead heart will not melt in the furnace."', "led"),
    ("They buried him in a lead coffin.", "led"),
    ("She was the lead singer.", "lead"),
    ("We lead the merriest lives in the world.", "lead"),
    ("He came to some aged widows and orphans.", "aijid"),
    ("She hoped to meet your aged mother.", "aijid"),
    ("The poor aged man wept.", "aijid"),
    ("Those aged between 18 and 65 may apply.", "aged"),
    ("Those aged sixty may apply.", "aged"),
    ("Serve some aged cheese.", "aged"),
]


@pytest.mark.parametrize("sentence,reading", HETERONYM_CONTEXTS, ids=[s for s, _ in HETERONYM_CONTEXTS])
def test_heteronym_context_rules_choose_the_reading(sentence: str, reading: str) -> None:
    from studio.text.normalize.heteronyms import HETERONYMS

    words = spoken_form(sentence, "en").lower().replace('"', " ").replace(",", " ").replace(".", " ").split()
    assert reading in words
    if reading in HETERONYMS:  # left as printed: the other reading must not be there either
        assert HETERONYMS[reading][0] not in words


def test_plain_text_passes_untouched_and_the_pronoun_i_is_no_numeral() -> None:
    for sentence in ("I think I can.", "The sun came up over the hills.", "No, he said."):
        assert spoken_form(sentence, "en") == sentence
    assert spoken_form("MIX the paint.", "en") == "Mix the paint."  # a word in capitals, no numeral


def test_lexicon_entries_win_over_the_normaliser() -> None:
    lexicon = Lexicon.of([LexiconEntry("1984", "alias", "nineteen eighty-four"),
                          LexiconEntry("Dr.", "alias", "Drive", language="en")])
    text = "Read 1984 on Dr. Smith's desk in 1950."
    spoken = spoken_form(text, "en", lexicon)
    assert spoken == "Read 1984 on Dr. Smith's desk in nineteen fifty."
    # the entries still apply in the front end, to the printed words the normaliser kept
    assert phonemes(spoken, "en", lexicon) == phonemes("Read nineteen eighty-four on Drive Smith's desk in nineteen fifty.")


def _book():
    from dataclasses import replace

    book = make_book()
    extra = replace(book.chapters[0], paragraphs=book.chapters[0].paragraphs + (para("It cost $5 in 1907."),))
    return replace(book, chapters=(extra, *book.chapters[1:]))


def test_cache_key_follows_the_spoken_form_and_the_override_survives_reopening(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    Project.create(folder, _book(), ProjectSettings(VOICE)).close()
    with Project.open(folder) as project:
        rows = {r.text: r for r in project.sentences()}
        plain, money = rows["The sun came up."], rows["It cost $5 in 1907."]
        settings = project.settings()
        voice = VoiceIdentity(VOICE, project.voice_fingerprints().get(VOICE, ""))

        def key(text: str) -> str:
            return cache_key(text=text, language="en", voice=voice, engine=settings.engine_token,
                             settings_token=settings.synthesis.cache_token())

        # a sentence said as printed keeps the key it had before normalisation existed
        assert plain.spoken == plain.text and plain.expected_key == key(plain.text)
        assert money.spoken == "It cost five dollars in nineteen oh seven."
        assert money.expected_key == key(money.spoken) != key(money.text)
        before = {r.id: r.expected_key for r in project.sentences()}
        project.spoken.set(money.id, "It cost five bucks in nineteen hundred and seven.")
    with Project.open(folder) as project:
        after = {r.id: r for r in project.sentences()}
        assert after[money.id].spoken == "It cost five bucks in nineteen hundred and seven."
        changed = [i for i, k in before.items() if after[i].expected_key != k]
        assert changed == [money.id]  # exactly the overridden sentence re-renders
        project.spoken.set(money.id, None)
        assert {r.id: r.expected_key for r in project.sentences()} == before
        # an edit of the printed text drops an override made for the old words
        project.spoken.set(money.id, "It cost a fiver.")
        project.edit_sentence(money.id, "It cost $6 in 1907.")
        assert next(r for r in project.sentences() if r.id == money.id).spoken == "It cost six dollars in nineteen oh seven."


def test_a_re_import_keeps_the_overrides_of_unchanged_sentences(tmp_path: Path) -> None:
    from dataclasses import replace

    with Project.create(tmp_path / "p", _book(), ProjectSettings(VOICE)) as project:
        money = next(r for r in project.sentences() if r.text == "It cost $5 in 1907.")
        project.spoken.set(money.id, "It cost a fiver in nineteen oh seven.")
        book = _book()
        changed = replace(book, chapters=(book.chapters[0], replace(book.chapters[1], title="Night")))
        assert project.replace_book(changed) >= 1
        again = next(r for r in project.sentences() if r.text == "It cost $5 in 1907.")
        assert again.spoken == "It cost a fiver in nineteen oh seven."


def test_schema_step_is_additive(tmp_path: Path) -> None:
    import sqlite3

    Project.create(tmp_path / "p", make_book(), ProjectSettings(VOICE)).close()
    conn = sqlite3.connect(tmp_path / "p" / Project.DB_NAME)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        cols = [r[1] for r in conn.execute("PRAGMA table_info(spoken_overrides)")]
        assert cols[:3] == ["sentence_id", "printed", "spoken"]
    finally:
        conn.close()


def test_inspect_spoken_lists_changes_and_json_has_every_sentence(tmp_path: Path) -> None:
    import json

    from support.render import studio_cmd

    book = tmp_path / "one.txt"
    book.write_text("Henry VIII paid $5.50 on Jan. 5, 1509. The cat sat down.\n", encoding="utf-8")
    proc = studio_cmd("inspect", str(book), "--spoken")
    assert proc.returncode == 0, proc.stderr
    assert "Henry the Eighth paid five dollars and fifty cents on January fifth, fifteen oh nine." in proc.stdout
    assert "The cat sat down." not in proc.stdout  # said as printed: not listed
    proc = studio_cmd("inspect", str(book), "--spoken", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert {"chapter", "index", "text", "spoken", "language"} <= set(rows[0])
    said = {r["text"]: r for r in rows}
    assert said["The cat sat down."]["spoken"] == "The cat sat down."
    assert said["Henry VIII paid $5.50 on Jan. 5, 1509."]["language"] == "en"
