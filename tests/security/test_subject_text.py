"""Subject text never reaches a terminal, a log or a report raw (issue 26, part 3).

The model under test names files, names the tools it calls and writes the response; pi
relays its error text; a stored result can hold anything. A hostile corpus of each class
goes through the real pi host (the scripted stand-in makes pi write files with those names,
call tools with those names and answer with that text) and through every surface: pytest's
terminal at ``-q``, default, ``-v`` and ``-vv`` (live progress, ``-v`` detail lines, failure
details, the short summary, the summary table), the JUnit XML, the GitHub step summary, and
``skill-eval view``. No byte of any raw form may come out; the escaped forms must.
"""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from pytest_skill_eval.host.install import CACHE_ENV, cache_dir
from pytest_skill_eval.safe_text import escape_path, neutralise
from pytest_skill_eval.services.step_summary import step_summary

QUICKSTART = Path(__file__).resolve().parents[2] / "example_suites" / "quickstart"

#: one entry per class: the issue names the first seven, the others are the ones it does not
CORPUS: dict[str, list[str]] = {
    "c0-controls": ["bell\x07back\x08vt\x0bff\x0cso\x0e\x1fend"],
    "escape-sequences": ["clear\x1b[2J\x1b[31mred\x1b[0m", "clip\x1b]52;c;ZXZpbA==\x07", "title\x1b]0;pwned\x1b\\"],
    "c1-controls": ["csi8\x9b2J", "c1\x80\x90\x9d\x9f"],
    "cr-lf": ["a\r\nFAILED forged.py::x - boom", "b\rPASSED forged.py::y"],
    "bidi": ["bidi\u202etxt.exe", "embed\u202a\u202b\u202c\u202d", "isolate\u2066\u2067\u2068\u2069", "marks\u200e\u200f\u061c"],
    "lone-surrogates": [],  # only JSON can carry them: see test_a_stored_record_with_lone_surrogates
    # classes the issue does not name
    "dcs-apc-pm-sos": ["dcs\x1bPq#0;2;0\x1b\\", "apc\x1b_payload\x1b\\", "pm\x1b^x\x1b\\", "sos\x1bXy\x1b\\"],
    "del": ["del\x7fete"],
    "nel": ["next\x85line"],
    "invisible-format": ["zw\u200b\u200c\u200d\u2060", "bom\ufeff", "soft\u00adhyphen", "mongolian\u180e", "anno\ufff9\ufffb"],
    "line-separators": ["ls\u2028FAILED forged.py::z", "ps\u2029end"],
    "tags": ["tag\U000e0001\U000e0041\U000e007f"],
    "spaces-only": ["\u3000\u00a0\u2003", "\u205f"],
}


def is_escaped(c: str) -> bool:
    """What must never reach a surface as it is (decided here, not by the code under test)."""
    return c != " " and unicodedata.category(c) in ("Cc", "Cf", "Cs", "Cn", "Zl", "Zp", "Zs")


SAMPLES = [text for texts in CORPUS.values() for text in texts]
#: every character of the corpus that may never come out as it is
RAW = sorted({c for text in SAMPLES for c in text if is_escaped(c) and c not in "\n\t"})
#: lines the corpus tries to forge in a log
FORGED = (b"FAILED forged", b"PASSED forged")


# -------------------------------------------------------------------- the function


@pytest.mark.parametrize("cls", sorted(CORPUS))
def test_every_class_comes_out_escaped_on_one_line(cls: str) -> None:
    for text in CORPUS[cls]:
        for one_line in (True, False):
            shown = neutralise(text, one_line=one_line)
            assert not [c for c in shown if is_escaped(c) and c not in "\n\t"], (cls, shown)
            assert neutralise(shown, one_line=one_line) == shown, "neutralised twice reads the same"
        assert len(neutralise(text, one_line=True).splitlines()) == 1, (cls, text)


def test_each_class_has_its_documented_visible_form() -> None:
    assert neutralise("\x1b[2J\x9b\x85\x7f") == "\\u001b[2J\\u009b\\u0085\\u007f"
    assert neutralise("a\r\nb", one_line=True) == "a\\r\\nb"
    assert neutralise("a\r\nb") == "a\\r\nb"
    assert neutralise("\u202e\u2066\u200b\ufeff\u2028\u00a0\u3000") == "\\u202e\\u2066\\u200b\\ufeff\\u2028\\u00a0\\u3000"
    assert neutralise("\U000e0041\ud800") == "\\U000e0041\\ud800"
    assert neutralise("é 中文 emoji \U0001f600 tab\t") == "é 中文 emoji \U0001f600 tab\t", "printable text is left alone"
    assert escape_path("   ") == "\\u0020\\u0020\\u0020", "a name of spaces is never shown as nothing"
    assert escape_path("dir/  ") == "dir/\\u0020\\u0020"


# -------------------------------------------------------------------- the step summary (host-free)


def test_step_summary_cells_are_inert_markdown(tmp_path: Path) -> None:
    nodeid = "s``uite.json::g|x <img src=x onerror=alert(1)> ![t](http://e.invalid/t.png) \x1b[2J\u202e\r\n## forged"
    text = step_summary([(nodeid, "error", None)], result_id="r", state="complete", result_dir=tmp_path,
                        rootdir=tmp_path, html_report=None)
    row = next(line for line in text.splitlines() if line.startswith("|  | "))
    assert "```s``uite.json::g\\|x <img" in row, "a code span no backtick run in it closes, the pipe escaped"
    assert "## forged" not in text.replace("\\r\\n## forged", ""), "no line of its own"
    assert not [c for c in text if is_escaped(c) and c != "\n"]
    assert "\\u001b[2J\\u202e\\r\\n" in row


# -------------------------------------------------------------------- real runs through pi


#: one file per class (the failure text lists up to 20 changed files); every sample is a tool name
FILE_NAMES = {cls: texts[0] for cls, texts in CORPUS.items() if texts}


def _script() -> dict[str, Any]:
    writes = [{"name": "write", "arguments": {"path": name, "content": "x"}} for name in FILE_NAMES.values()]
    tools = [{"name": name, "arguments": {"argument": name}} for name in SAMPLES]
    response = "done " + " ".join(SAMPLES)
    return {"schema": "skill-eval-script/1",
            "turns": [{"steps": [{"tool_calls": writes}, {"tool_calls": tools}, {"text": response}]}]}


def _group() -> dict[str, Any]:
    variant = {"source": {"kind": "working-tree"}, "skills": ["skills/release-notes"], "target": 0, "context": []}
    return {
        "schema_version": 1, "kind": "group", "id": "hostile", "type": "body",
        "input": {"prompt": "Write the files."}, "fixture": "fixtures/change", "tools": ["read", "write"],
        "variants": {"baseline": variant, "candidate": variant},
        "expectations": [
            # both fail, so the failure text shows every file name and an excerpt of the response
            {"id": "no-changes", "kind": "changed-paths", "variant": "candidate", "expect": "equals", "paths": []},
            {"id": "says", "kind": "response-text", "variant": "candidate", "expect": "contains",
             "value": "a phrase never said"},
            {"id": "wrote", "kind": "tool-call", "variant": "candidate", "tool": "write", "expect": "not-called"},
        ],
        "review_questions": [], "model": {"model": "scripted/hostile"},
    }


@pytest.fixture(scope="module")
def hostile_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    for part in ("skills", "fixtures"):
        shutil.copytree(QUICKSTART / part, root / part)
    (root / "scripts").mkdir()
    (root / "scripts" / "hostile.json").write_text(json.dumps(_script()), encoding="utf-8")
    (root / "suite.json").write_text(json.dumps({"schema_version": 1, "kind": "suite", "id": "hostile",
                                                 "groups": ["groups/hostile.json"]}), encoding="utf-8")
    (root / "groups").mkdir()
    (root / "groups" / "hostile.json").write_text(json.dumps(_group()), encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return root


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PY_COLORS", "FORCE_COLOR", "NO_COLOR", "PYTEST_ADDOPTS",
                                                             "GITHUB_STEP_SUMMARY")}
    return {**env, CACHE_ENV: str(cache_dir()), **extra}


def _skill_eval(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "pytest_skill_eval", *args], cwd=root, capture_output=True,
                          env=_env(), timeout=300, check=False)


def _raw_in(data: bytes) -> list[str]:
    return [f"U+{ord(c):04X}" for c in RAW if c.encode("utf-8", "surrogatepass") in data]


def _forged(data: bytes) -> list[bytes]:
    return [line for line in data.splitlines() if line.lstrip(b"\r").startswith(FORGED)]


def _xml_values(path: Path) -> list[str]:
    values = []
    for element in ElementTree.parse(path).getroot().iter():
        values += [*element.attrib.values(), element.text or "", element.tail or ""]
    return values


def _run(root: Path, tmp_path: Path, verbosity: list[str]) -> tuple[bytes, Path, Path, str]:
    junit, summary = tmp_path / "report.xml", tmp_path / "step-summary.md"
    runs = root / ".skill-eval" / "runs"
    before = {p for p in runs.glob("*") if p.is_dir()}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--color=no", "--skill-eval",
                           "suite.json", f"--junitxml={junit}", *verbosity], cwd=root, capture_output=True,
                          env=_env(GITHUB_STEP_SUMMARY=str(summary)), timeout=600, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out.decode(errors="replace")
    (result,) = {p for p in runs.glob("*") if p.is_dir()} - before
    return out, junit, summary, result.name


@pytest.mark.pi
@pytest.mark.parametrize("verbosity", [["-q"], [], ["-v"], ["-vv"]], ids=["quiet", "default", "verbose", "very-verbose"])
def test_subject_text_never_reaches_any_surface_raw(hostile_project: Path, tmp_path: Path,
                                                    verbosity: list[str]) -> None:
    out, junit, summary, result_id = _run(hostile_project, tmp_path, verbosity)
    text = out.decode("utf-8")
    assert _raw_in(out) == [] and _forged(out) == [], text
    assert "\r" not in text and "\x1b" not in text
    # the corpus did reach the terminal, escaped once: file names, the response excerpt
    assert "bidi\\u202etxt.exe (added)" in text
    assert "a\\r\\nFAILED forged.py::x - boom (added)" in text
    for cls, name in FILE_NAMES.items():
        # pi's write turns other spaces into ASCII ones: a name of spaces is shown as \u0020s
        cell = escape_path(name if cls != "spaces-only" else " " * len(name))
        assert f"{cell} (added)" in text, (cls, cell)
    assert 'it reads "done bell\\u0007back\\bvt' in text, "the excerpt, escaped once (not \\\\u0007)"
    assert "\\\\u0007" not in text and "\\\\r\\\\n" not in text, "nothing escaped twice"
    if verbosity in (["-v"], ["-vv"]):
        for sample in SAMPLES:  # the live progress line names each tool, escaped
            assert f"now {neutralise(sample, one_line=True)} (" in text, sample

    xml = junit.read_bytes()
    assert _raw_in(xml) == [] and b"\r" not in xml
    values = _xml_values(junit)
    assert [v for v in values if any(c in v for c in RAW)] == []
    assert any("bidi\\u202etxt.exe" in v for v in values)

    markdown = summary.read_bytes()
    assert _raw_in(markdown) == [] and _forged(markdown) == []
    assert result_id.encode() in markdown

    for args in ([result_id], [result_id, "--variant", "candidate"]):
        view = _skill_eval(hostile_project, "view", *args)
        assert view.returncode == 0, view.stderr.decode(errors="replace")
        shown = view.stdout + view.stderr
        assert _raw_in(shown) == [] and _forged(shown) == [], shown.decode(errors="replace")
    shown_text = shown.decode("utf-8")
    for sample in SAMPLES:  # each tool name on its own line
        assert f"\n    tool       {neutralise(sample, one_line=True)} " in shown_text, sample
    assert "workspace/\\u0020\\u0020\\u0020\n" in shown_text, "the name of spaces, visible"


@pytest.mark.pi
def test_a_stored_record_with_lone_surrogates_is_shown_escaped(hostile_project: Path, tmp_path: Path) -> None:
    """JSON can carry what UTF-8 cannot: a lone surrogate in a stored transcript is shown as ``\\ud800``."""
    _out, _junit, _summary, result_id = _run(hostile_project, tmp_path, ["-q"])
    transcript = next((hostile_project / ".skill-eval" / "runs" / result_id).glob("groups/*/candidate/transcript.json"))
    data = json.loads(transcript.read_text(encoding="utf-8"))
    data["turns"][0]["response"] = "lone \ud800 high, \udfff low, \x1b[2J"
    data["turns"][0]["tool_calls"][0]["name"] = "tool\udc00"
    transcript.write_text(json.dumps(data), encoding="ascii")  # json writes the surrogates as \ud800
    assert b'\\ud800' in transcript.read_bytes()
    # a stored one-line field that holds a line break (the group id) must not start a line
    group_file = transcript.parent.parent / "group.json"
    group = json.loads(group_file.read_text(encoding="utf-8"))
    group["id"] = "hostile\nFAILED forged.py::g - boom\u2028PASSED forged.py::h"
    group_file.write_text(json.dumps(group), encoding="utf-8")
    view = _skill_eval(hostile_project, "view", result_id, "--variant", "candidate")
    shown = view.stdout + view.stderr
    assert b"Traceback" not in shown and b"UnicodeEncodeError" not in shown, shown.decode(errors="replace")
    assert b"\xed\xa0\x80" not in shown and b"\xed\xbf\xbf" not in shown and b"\x1b" not in shown
    shown.decode("utf-8")  # strict: every byte written is valid UTF-8
    assert _forged(shown) == [], shown.decode()
    assert view.returncode in (0, 1), shown.decode(errors="replace")  # 1: a reader that names it a problem
    if view.returncode == 0:
        assert b"response   lone \\ud800 high, \\udfff low, \\u001b[2J" in view.stdout
        assert b"tool       tool\\udc00 " in view.stdout


#: what pytest and the status line write to a terminal themselves: SGR colours, erase-line,
#: IND, RI, save and restore the cursor; anything else with an ESC came from somewhere else
_OWN_SEQUENCES = re.compile(rb"\x1b\[[0-9;]*m|\x1b\[2K|\x1b[DM78]")


@pytest.mark.pi
def test_a_real_terminal_gets_no_sequence_but_pytests_own(hostile_project: Path) -> None:
    """At default verbosity on a terminal the live status line is drawn in place: through a
    real pseudo-terminal, no sequence of the corpus may reach it, only pytest's own."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--color=yes",
                             "--skill-eval", "suite.json"], cwd=hostile_project, stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, env=_env(TERM="xterm", COLUMNS="400"))
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert proc.wait(timeout=600) == 1, out.decode(errors="replace")
    assert b"skill-eval: hostile [candidate]" in out, "the status line was drawn"
    for sample in SAMPLES:  # the status line named each tool, escaped
        assert f"now {neutralise(sample, one_line=True)} (".encode() in out, sample
    foreign = _OWN_SEQUENCES.sub(b"", out)
    assert b"\x1b" not in foreign, foreign[max(0, foreign.find(b"\x1b") - 80):foreign.find(b"\x1b") + 80]
    assert _raw_in(out.replace(b"\x1b", b"").replace(b"\r", b"")) == []
    assert _forged(out) == []


def test_a_broken_group_named_with_a_line_separator_does_not_split_pytests_lines(tmp_path: Path) -> None:
    """pytest prints node ids as they are: the node of an invalid suite entry is named by its
    reference neutralised (U+2028, zero-width), while the evidence keeps the reference as written."""
    ref = "groups/a\u2028FAILED forged.py::r\u200b.json"
    (tmp_path / "groups").mkdir()
    (tmp_path / ref).write_text("{}", encoding="utf-8")
    (tmp_path / "suite.json").write_text(json.dumps({"schema_version": 1, "kind": "suite", "id": "s",
                                                     "groups": [ref]}), encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    junit = tmp_path / "report.xml"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--color=no", "-v", "-rA",
                           "--skill-eval", "suite.json", f"--junitxml={junit}"], cwd=tmp_path, capture_output=True,
                          env=_env(), timeout=300, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out.decode(errors="replace")
    assert "\u2028".encode() not in out and "\u200b".encode() not in out, out.decode()
    assert b"suite.json::groups/a\\u2028FAILED forged.py::r\\u200b.json ERROR invalid" in out
    assert "\u2028".encode() not in junit.read_bytes()
    (result,) = (p for p in (tmp_path / ".skill-eval" / "runs").iterdir() if p.is_dir())
    selection = json.loads((result / "selection.json").read_text(encoding="utf-8"))
    assert [g["ref"] for g in selection["groups"]] == [ref]
