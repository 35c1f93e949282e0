"""Every ``studio`` command and option that README.md and docs/*.md show exists in the command line.

Why: the docs are what a user types from. A command or option renamed or dropped in
the code, or one a page invents, must fail here rather than in a user's terminal.
The snippets are the lines of code blocks and the inline code spans that start with
``studio`` (also ``.venv/bin/studio`` and ``python -m studio``); a code-block comment
line that starts with ``--`` continues the command above it. They are checked against
the real parser, built as the console script builds it (``gui`` included), so what
passes here is what ``studio ... --help`` lists: the command path, every option,
and the value of an option that has fixed choices.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from studio.cli import build_parser
from studio.ui.command import register as register_gui


def _root() -> Path:
    here = Path(__file__).resolve().parent
    while not (here / "pyproject.toml").is_file():
        here = here.parent
    return here


ROOT = _root()
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^\s*```(\w*)")
_INLINE = re.compile(r"`([^`]+)`")
_OPTION = re.compile(r"^--?[A-Za-z][\w-]*")
_STUDIO = re.compile(r"^(?:\S*/)?studio$")
#: a value the docs stand in for (FILE, N, <voice>, ...), not one to check against choices
_PLACEHOLDER = re.compile(r"^(?:[A-Z][A-Z0-9_]*|<.*>|\.\.\.|…)$")


@dataclass(frozen=True)
class Snippet:
    page: str
    line: int
    text: str
    tokens: tuple[str, ...]  # what follows ``studio``
    #: options the prose names after it (`--x`): the prose may have moved on to another
    #: command, so each must exist in this one or in another ``studio`` command
    loose: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.text}"


def _after_studio(segment: str) -> list[str] | None:
    """The words after ``studio`` when ``segment`` runs the studio command, else None."""
    words = segment.split()
    for k, word in enumerate(words):
        if _STUDIO.match(word) and (k == 0 or words[k - 1] in ("-m", "&&", "sudo") or "/" in word):
            return words[k + 1:]
    return None


def _segments(line: str) -> list[str]:
    """A shell line cut into its commands, its comment dropped."""
    code = re.split(r"(?:^|\s)#", line, maxsplit=1)[0]
    return [part for part in re.split(r"&&|;", code) if part.strip()]


@dataclass
class _Prose:
    """What the prose of a section is about: a studio command, another program or nothing yet."""

    found: list[Snippet]
    current: int | None = None  # index in found of the studio command named last
    other: bool = False  # another program (`installer/install.sh`, `bench/soak.py`) named last


def _inline(name: str, start: int, paragraph: list[str], prose: _Prose) -> None:
    """The ``studio ...`` spans of one paragraph; an option span (`--x`) after one belongs to it.

    Why the second rule: prose says "`studio render ... --speed 1.1` (also `--title-pause`)";
    a span that names another program (`installer/install.sh`, then `--dev`) hands the
    section's options to that program until a studio command is named again.
    """
    found = prose.found
    text = "\n".join(paragraph)
    for match in _INLINE.finditer(text):
        span = " ".join(match.group(1).split())
        line = start + text.count("\n", 0, match.start())
        words = span.split()
        if len(words) > 1 and (_STUDIO.match(words[0]) or words[:3] == ["python", "-m", "studio"]):
            found.append(Snippet(name, line, span, tuple(_after_studio(span) or ())))
            prose.current, prose.other = len(found) - 1, False
        elif span.startswith("--") and _OPTION.match(span) and not prose.other:
            flag = _OPTION.match(span).group(0)
            if prose.current is None:  # an option named on its own: some studio command has it
                found.append(Snippet(name, line, span, (), (flag,)))
            else:
                last = found[prose.current]
                found[prose.current] = Snippet(name, last.line, f"{last.text} ... {flag}", last.tokens, last.loose + (flag,))
        elif words[0].endswith((".sh", ".py", ".ps1")) or words[0] in ("python", "python3", "bash", "pip", "piper",
                                                                       "powershell", "winget"):
            prose.current, prose.other = None, True


def snippets(page: Path, root: Path = ROOT) -> list[Snippet]:
    """Every ``studio ...`` a page shows, in code blocks and inline code."""
    name = str(page.relative_to(root))
    found: list[Snippet] = []
    prose = _Prose(found)
    fence: str | None = None
    paragraph: list[str] = []
    start = 0
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        opened = _FENCE.match(line)
        if fence is None and (opened or not line.strip() or line.startswith("#")):
            _inline(name, start, paragraph, prose)
            paragraph = []
            if line.startswith("#"):  # a heading: a new subject
                prose = _Prose(found)
        if opened:
            fence = None if fence is not None else opened.group(1)
            continue
        if fence is not None:
            if fence in ("text", "console-output"):
                continue
            comment = line.strip().lstrip("#").strip()
            if line.strip().startswith("#") and comment.startswith("--") and found and found[-1].page == name:
                last = found[-1]  # options listed under the command they belong to
                found[-1] = Snippet(name, last.line, f"{last.text} {comment}", last.tokens + tuple(comment.split()))
                continue
            for segment in _segments(line):
                words = _after_studio(segment)
                if words is not None:
                    found.append(Snippet(name, number, segment.strip(), tuple(words)))
            continue
        if line.strip():
            if not paragraph:
                start = number
            paragraph.append(line)
    _inline(name, start, paragraph, prose)
    return found


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser] | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return None


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {flag: action for action in parser._actions for flag in action.option_strings}


def _clean(token: str) -> str:
    return token.strip("[](),").rstrip(".:")


def problems(tokens: tuple[str, ...] | list[str], parser: argparse.ArgumentParser) -> list[str]:
    """What in ``studio <tokens>`` the parser does not know: commands, options, choices."""
    found: list[str] = []
    path = ["studio"]
    words = [_clean(t) for t in tokens if _clean(t) and _clean(t) != "|"]
    k = 0
    while k < len(words):
        word = words[k]
        if _OPTION.match(word):
            flag, _, inline_value = _OPTION.match(word).group(0), None, None
            if "=" in word:
                inline_value = word.split("=", 1)[1]
            repeated = re.fullmatch(r"-([A-Za-z])\1+", flag)
            if repeated:
                flag = f"-{repeated.group(1)}"
            action = _options(parser).get(flag)
            if action is None:
                found.append(f"`{' '.join(path)}` has no option {flag}")
                k += 1
                continue
            value = inline_value
            if value is None and action.nargs != 0 and k + 1 < len(words) and not _OPTION.match(words[k + 1]):
                value = words[k + 1]
                k += 1
            if value is not None and action.choices is not None and not _PLACEHOLDER.match(value):
                for choice in value.split("|"):
                    if choice and choice not in action.choices:
                        found.append(f"`{' '.join(path)} {flag}` has no choice {choice!r} "
                                     f"(it takes {', '.join(map(str, action.choices))})")
            k += 1
            continue
        commands = _subcommands(parser)
        if commands is None:
            k += 1  # a positional argument
            continue
        if word in commands:
            parser = commands[word]
            path.append(word)
        elif not _PLACEHOLDER.match(word):
            found.append(f"`{' '.join(path)}` has no command {word!r} (it has {', '.join(commands)})")
            return found
        k += 1
    return found


def _every_option(parser: argparse.ArgumentParser) -> set[str]:
    flags = set(_options(parser))
    for sub in (_subcommands(parser) or {}).values():
        flags |= _every_option(sub)
    return flags


def loose_problems(snippet: Snippet, parser: argparse.ArgumentParser) -> list[str]:
    """The options the prose names after a command that no ``studio`` command has."""
    known = _every_option(parser)
    return [f"no `studio` command has the option {flag}" for flag in snippet.loose if flag not in known]


@pytest.fixture(scope="module")
def parser() -> argparse.ArgumentParser:
    return build_parser(commands=(register_gui,))


ALL = [snippet for page in PAGES for snippet in snippets(page)]


def test_the_docs_show_commands() -> None:
    """The extraction finds the pages' commands (an empty list would pass everything below)."""
    assert len(ALL) > 60, [str(s) for s in ALL]
    assert {s.page for s in ALL} >= {"README.md", "docs/export-and-publishing.md", "docs/triton.md"}


def test_every_command_and_option_the_docs_show_exists(parser: argparse.ArgumentParser) -> None:
    wrong = [f"{snippet}\n    -> {problem}" for snippet in ALL
             for problem in problems(snippet.tokens, parser) + loose_problems(snippet, parser)]
    assert not wrong, "the docs show what the command line does not have:\n" + "\n".join(wrong)


def test_the_readme_lists_every_command(parser: argparse.ArgumentParser) -> None:
    shown = {s.tokens[0] for s in snippets(ROOT / "README.md") if s.tokens}
    assert set(_subcommands(parser) or {}) <= shown


@pytest.mark.parametrize("command, expected", [
    ("export out/book.studio -o pub --no-such-option", "has no option --no-such-option"),
    ("render book.epub -o out --format ogg", "has no choice 'ogg'"),
    ("lexicon rename out/book.studio A B", "has no command 'rename'"),
    ("publish out/book.studio", "has no command 'publish'"),
    ("export out/book.studio -o pub --cover-fit pad|stretch", "has no choice 'stretch'"),
])
def test_the_check_refuses_what_does_not_exist(parser: argparse.ArgumentParser, command: str, expected: str) -> None:
    found = problems(command.split(), parser)
    assert any(expected in problem for problem in found), found


def test_the_check_reads_a_page_as_a_user_does(tmp_path: Path, parser: argparse.ArgumentParser) -> None:
    """Code blocks, continued option lists and inline code are all read; output blocks are not."""
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text(
        "Run `studio render book.md\n-o out --speedy 2` first (also `--pace`; `bash x.sh --dev`).\n\n"
        "```sh\n"
        "bash installer/install.sh && .venv/bin/studio export p -o pub\n"
        "#  --narrator NAME  --no-credit\n"
        "```\n\n"
        "```text\nstudio render --not-checked-here\n```\n",
        encoding="utf-8")
    found = snippets(page, root=tmp_path)
    assert [s.line for s in found] == [1, 5]
    assert [p for s in found for p in problems(s.tokens, parser) + loose_problems(s, parser)] == [
        "`studio render` has no option --speedy", "no `studio` command has the option --pace",
        "`studio export` has no option --no-credit"]
