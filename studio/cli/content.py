"""``--notes``, ``--images``, ``--tables``, ``--code``: what is read of what is not running prose.

Why one module: ``studio render`` stores the choices in the project (as ``--unvoiced``
does) and ``studio inspect`` lists a manuscript's sentences and audit as those choices
would read it; both take the same arguments (:mod:`studio.text.content`).
"""

from __future__ import annotations

import argparse

from studio.text.content import CHOICES, DEFAULTS


def add_arguments(p: argparse.ArgumentParser, *, stored: bool) -> None:
    """The four choices; ``stored``: they are kept in the project (render), else only for this report."""
    where = "; stored in the project" if stored else ""
    for name, choices in CHOICES.items():
        said = "; ".join(f"{value}: {meaning}" for value, meaning in choices.items())
        p.add_argument(f"--{name}", choices=tuple(choices),
                       help=f"{name}: {said} (default: the project's, else {DEFAULTS[name]}){where}")


def content_changes(args: argparse.Namespace) -> dict[str, str]:
    """The choices given on the command line (setting -> value)."""
    return {name: value for name in CHOICES if (value := getattr(args, name, None))}
