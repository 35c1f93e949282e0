"""``studio lexicon list|add|remove|import|export``: the pronunciation lexicon.

Each subcommand works on a project folder, or with ``--user`` on the user's own
lexicon (a PLS file every project inherits). Changing an entry changes the cache
keys of exactly the sentences that contain it, so the next ``studio render``
speaks those again and nothing else; ``add`` and ``remove`` say how many.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from studio.cli.common import print_table
from studio.core.errors import StudioError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "lexicon", help="list and edit pronunciations (names, rare words)",
        description="A project's pronunciation lexicon: respellings ('Nguyen' says 'Win') or IPA "
        "phonemes for words and phrases, applied before phonemization by every engine. "
        "--user works on your own lexicon, which every project inherits.",
    )
    cmds = p.add_subparsers(dest="lexicon_command", metavar="ACTION", required=True)

    def target(q: argparse.ArgumentParser) -> None:
        q.add_argument("project", type=Path, nargs="?", help="project folder (omit with --user)")
        q.add_argument("--user", action="store_true", help="your own lexicon instead of a project's")

    q = cmds.add_parser("list", help="the entries, how often each is used, and words to check")
    target(q)
    q.add_argument("--suggest", action="store_true", help="also list words the voice will likely guess")
    q.set_defaults(func=_cmd_list)

    q = cmds.add_parser("add", help="add or replace the entry for a word or phrase")
    target(q)
    q.add_argument("word", help="the word or phrase as written (matched as whole words)")
    how = q.add_mutually_exclusive_group(required=True)
    how.add_argument("--say", metavar="RESPELLING", help="speak this text instead ('Win')")
    how.add_argument("--ipa", metavar="PHONEMES", help="speak these IPA phonemes ('wɪn')")
    q.add_argument("--exact-case", action="store_true", help="match only this capitalisation")
    q.add_argument("--language", help="only in passages of this language (ISO 639-1)")
    q.set_defaults(func=_cmd_add)

    q = cmds.add_parser("remove", help="remove the entries for a word or phrase")
    target(q)
    q.add_argument("word")
    q.add_argument("--language", help="only the entry for this language")
    q.set_defaults(func=_cmd_remove)

    q = cmds.add_parser("import", help="add entries from a PLS lexicon or an EPUB's pronunciations")
    target(q)
    q.add_argument("file", type=Path, help=".pls file, or .epub (its PLS lexicons and SSML)")
    q.set_defaults(func=_cmd_import)

    q = cmds.add_parser("export", help="write the entries as a W3C PLS file")
    target(q)
    q.add_argument("file", type=Path, help="the .pls file to write")
    q.set_defaults(func=_cmd_export)


class _Target:
    """The project (opened) or the user's lexicon file, behind one small interface."""

    def __init__(self, args: argparse.Namespace) -> None:
        from studio.project.store import Project

        if args.user == (args.project is not None):
            raise StudioError("give a project folder, or --user for your own lexicon (not both)")
        self.project = Project.open(args.project) if args.project is not None else None

    def __enter__(self) -> _Target:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.project is not None:
            self.project.close()

    def lexicon(self):  # -> studio.core.lexicon.Lexicon
        from studio.project.lexicon import user_lexicon

        return self.project.lexicon.entries() if self.project is not None else user_lexicon()

    def add(self, entries: list, source: str) -> int:
        from studio.core.lexicon import Lexicon
        from studio.project.lexicon import save_user_lexicon, user_lexicon

        if self.project is not None:
            return self.project.lexicon.add(entries, source=source)
        save_user_lexicon(Lexicon.of([*user_lexicon().entries, *entries]))
        return len(entries)

    def keys(self) -> dict:
        """``{sentence id: cache key}``: compared before and after an edit."""
        return {r.id: r.expected_key for r in self.project.sentences()} if self.project is not None else {}


def _changed(before: dict, target: _Target) -> str:
    if target.project is None:
        return "every project that inherits it re-renders the sentences that contain it"
    after = target.keys()
    n = sum(1 for sid, key in after.items() if before.get(sid) != key)
    return f"{n} sentence(s) will render again"


def _cmd_list(args: argparse.Namespace) -> int:
    from studio.text.lexicon_report import report_for_sentences

    with _Target(args) as target:
        lexicon = target.lexicon()
        sources = target.project.lexicon.sources() if target.project is not None else {}
        used: dict = {}
        report = None
        if target.project is not None:
            rows = [(r.text, r.language) for r in target.project.sentences()]
            report = report_for_sentences(rows, target.project.lexicon.effective())
            used = {u.entry.key: u.count for u in report.with_entries if u.entry is not None}
        _print_entries(lexicon, sources, used, sys.stdout)
        if args.suggest and report is not None:
            sys.stdout.write("\nwords the voice will likely guess (add entries for those that sound wrong):\n")
            rows_out = [("WORD", "COUNT", "FIRST SENTENCE")]
            rows_out += [(u.word, str(u.count), _short(u.first_sentence)) for u in report.suggestions]
            print_table(rows_out, sys.stdout)
    return 0


def _print_entries(lexicon, sources: dict, used: dict, out: TextIO) -> None:
    rows = [("WORD", "KIND", "SAYS", "CASE", "LANGUAGE", "SENTENCES", "FROM")]
    for e in lexicon.entries:
        rows.append((e.grapheme, "respell" if e.kind == "alias" else "ipa", e.value,
                     "exact" if e.case_sensitive else "any", e.language or "all",
                     str(used.get(e.key, 0)) if used or sources else "-", sources.get(e.key, "")))
    print_table(rows, out)
    out.write(f"{len(lexicon)} entr{'y' if len(lexicon) == 1 else 'ies'}\n")


def _short(text: str, n: int = 70) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def _cmd_add(args: argparse.Namespace) -> int:
    from studio.core.lexicon import LexiconEntry

    try:
        entry = LexiconEntry(args.word, "phoneme" if args.ipa else "alias", args.ipa or args.say,
                             args.exact_case, args.language)
    except ValueError as err:
        raise StudioError(str(err)) from None
    with _Target(args) as target:
        if entry.kind == "phoneme":
            _check_ipa(target, entry)
        before = target.keys()
        target.add([entry], "user")
        print(f"{entry.grapheme}: {'says' if entry.kind == 'alias' else 'IPA'} {entry.value}; {_changed(before, target)}")
    return 0


def _check_ipa(target: _Target, entry) -> None:  # entry: LexiconEntry
    """Refuse IPA the voice cannot say (its symbols would be dropped silently)."""
    from studio.rendering.lexicon_checks import unknown_ipa

    voice_id, unknown = unknown_ipa(target.project, entry)
    if unknown:
        raise StudioError(
            f"the voice {voice_id} has no phoneme for {' '.join(repr(c) for c in unknown)} in {entry.value!r}; "
            "use the IPA symbols the voice's phonemizer (espeak-ng) writes for this language"
        )


def _cmd_remove(args: argparse.Namespace) -> int:
    from studio.core.language import language_family
    from studio.core.lexicon import Lexicon, normalize_grapheme
    from studio.project.lexicon import save_user_lexicon, user_lexicon

    with _Target(args) as target:
        before = target.keys()
        if target.project is not None:
            n = target.project.lexicon.remove(args.word, language=args.language)
        else:
            g = normalize_grapheme(args.word).casefold()
            lang = language_family(args.language) if args.language else None
            keep = [e for e in user_lexicon().entries
                    if not (e.grapheme.casefold() == g and (lang is None or (e.language or "") == lang))]
            n = len(user_lexicon()) - len(keep)
            if not n:
                raise StudioError(f"your lexicon has no entry for {args.word!r}")
            save_user_lexicon(Lexicon.of(keep))
        print(f"removed {n} entr{'y' if n == 1 else 'ies'} for {args.word}; {_changed(before, target)}")
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    if not args.file.is_file():
        raise StudioError(f"{args.file}: no such file")
    if args.file.suffix.lower() == ".epub":
        from studio.text.formats.epub import read_epub_lexicon

        entries, skipped = list(read_epub_lexicon(args.file).entries), {}
    else:
        from studio.text.formats.pls import read_pls_file

        result = read_pls_file(args.file)
        entries, skipped = result.entries, dict(result.skipped)
    with _Target(args) as target:
        before = target.keys()
        n = target.add(entries, args.file.name)
        print(f"imported {n} entr{'y' if n == 1 else 'ies'} from {args.file.name}; {_changed(before, target)}")
    for reason, count in skipped.items():
        sys.stderr.write(f"studio: skipped {count} lexeme(s): {reason}\n")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from studio.text.formats.pls import write_pls_file

    with _Target(args) as target:
        lexicon = target.lexicon()
        write_pls_file(args.file, lexicon.entries)
    print(f"wrote {len(lexicon)} entr{'y' if len(lexicon) == 1 else 'ies'} to {args.file}")
    return 0
