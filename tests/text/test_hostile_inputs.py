"""The hostile-input corpus (``tests/hostile/``): each file is imported in its own
process, under a time bound and a memory cap, and must give a clear ManuscriptError
or a correct import -- never a traceback, a hang, a leaked local file or a book with
text silently missing. Where a correct import is expected, its first sentence is
spoken with the bundled voice too.

What is here and not in ``test_text_bad_input.py``/``test_text_epub.py``: the DOCX
and HTML variants of the attacks (entities, bombs, nesting 10,000 deep, huge
attributes and text nodes), encodings beyond UTF-8/cp1252, and process isolation
with a time bound for every case.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from studio.engine.base import SynthesisSettings
from support.render import REPO, real_engine

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hostile"))
import make_corpus  # noqa: E402 - lives beside the corpus it describes
from make_corpus import CASES, SECRET, case_path  # noqa: E402

#: the import runs in a child with this much address space at most: a bomb that got
#: past the guards fails the test with MemoryError instead of taking the machine down
MEMORY_CAP = 4 << 30
#: interpreter start-up and imports, on top of a case's own time bound
STARTUP_SLACK_S = 20

CHILD = r"""
import json, resource, sys, time
cap, path, needles = int(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
from studio.core.errors import ManuscriptError
from studio.text.importer import load_manuscript
started = time.perf_counter()
try:
    book = load_manuscript(path)
except ManuscriptError as err:
    print(json.dumps({"outcome": "error", "reason": err.reason, "path": err.path,
                      "seconds": time.perf_counter() - started}))
    sys.exit(0)
seconds = time.perf_counter() - started
parts = [book.title, book.author] + [c.title for c in book.chapters]
parts += [p.text for c in book.chapters for p in c.paragraphs]
parts += [s.text for c in book.chapters for p in c.paragraphs for s in p.sentences]
text = "\n".join(parts)
first = next(([s.text, s.language] for c in book.chapters for p in c.paragraphs for s in p.sentences
              if any(ch.isalnum() for ch in s.text)), None)
lossless = all("".join(s.text + s.trailing for s in p.sentences) == p.text
               for c in book.chapters for p in c.paragraphs)
print(json.dumps({"outcome": "ok", "seconds": seconds, "found": {n: n in text for n in needles},
                  "first": first, "lossless": lossless, "chapters": len(book.chapters)}))
"""


def needles(name: str) -> list[str]:
    expect = CASES[name]
    return list(expect.contains) + list(expect.absent) + [SECRET]


def import_in_child(path: Path, needles: list[str], bound_s: float) -> dict | str:
    """The child's JSON answer, or a string saying how it went wrong."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(MEMORY_CAP), str(path), json.dumps(needles)],
            capture_output=True, text=True, cwd=REPO, timeout=bound_s + STARTUP_SLACK_S,
        )
    except subprocess.TimeoutExpired:
        return f"importing {path.name} did not finish within {bound_s + STARTUP_SLACK_S:g} s"
    if proc.returncode != 0 or "Traceback" in proc.stderr:
        return f"importing {path.name} crashed (exit {proc.returncode}):\n{proc.stderr[-2000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict | str]]:
    """Every case imported in its own process, a few at a time (they are independent):
    the folder of the generated cases, and each case's answer."""
    out = tmp_path_factory.mktemp("hostile")
    make_corpus.generate(out)
    with ThreadPoolExecutor(max_workers=min(4, (os.cpu_count() or 2) + 1)) as pool:
        futures = {
            name: pool.submit(import_in_child, case_path(name, out), needles(name), CASES[name].seconds)
            for name in CASES
        }
        return out, {name: f.result() for name, f in futures.items()}


def test_every_committed_file_has_a_case() -> None:
    committed = {p.name for p in make_corpus.FILES.iterdir() if p.is_file()}
    assert committed <= set(CASES), committed - set(CASES)
    assert set(CASES) == committed | set(make_corpus.GENERATORS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_input(name: str, results: tuple[Path, dict[str, dict | str]]) -> None:
    expect = CASES[name]
    generated, answers = results
    path = case_path(name, generated)
    result = answers[name]
    if isinstance(result, str):
        pytest.fail(result)
    assert result["seconds"] <= expect.seconds, f"{name} took {result['seconds']:.1f} s (bound {expect.seconds:g} s)"

    if result["outcome"] == "error":
        assert expect.outcome in ("error", "either"), f"{name} was refused: {result['reason']}"
        reason = result["reason"]
        assert result["path"] == str(path) and "\n" not in reason
        assert not reason.startswith("could not import this file"), f"a reader bug, not a clear message: {reason}"
        assert re.search(expect.error, reason), f"{name}: unexpected reason {reason!r}"
        return

    assert expect.outcome in ("ok", "either"), f"{name} was imported; expected a refusal matching {expect.error!r}"
    found = result["found"]
    assert not found[SECRET], f"{name}: the secret file's content reached the book"
    missing = [n for n in expect.contains if not found[n]]
    assert not missing, f"{name}: text missing from the import: {missing}"
    leaked = [n for n in expect.absent if found[n]]
    assert not leaked, f"{name}: must not be in the import: {leaked}"
    assert result["lossless"], f"{name}: sentences do not add up to their paragraphs"

    if expect.render:
        text, language = result["first"]
        audio = real_engine().synthesize(text, language, SynthesisSettings())
        seconds = audio.size / real_engine().sample_rate
        rms = float(np.sqrt(np.mean(np.square(audio, dtype=np.float64))))
        assert seconds > 0.3 and rms > 0.01, f"{name}: {text!r} ({language}) gave {seconds:.2f} s at RMS {rms:.4f}"
