"""``skill-eval init <skill-dir>``: write a working starting point under ``.skill-eval/<name>/``.

The documents come from the pure :mod:`pytest_skill_eval.scaffold`; this module does the
I/O around it: reading ``SKILL.md``, finding the Git work tree (the definition root), making
sure ``HEAD`` holds the skill (it is the baseline), refusing to overwrite anything, and
writing each file without ever replacing one.

Decided: the baseline is always the skill at ``HEAD``. A repository without a commit that
holds the skill is refused with the commands that fix it, rather than falling back to a
working-tree baseline: that would be the candidate itself, and every comparison would be
``pass-to-pass`` for a real model too.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_skill_eval.definitions.rules import RUNS_TREE, evidence_tree_problem
from pytest_skill_eval.errors import InitRefusedError, SkillFileError
from pytest_skill_eval.evidence.store import shared_mode
from pytest_skill_eval.paths import check_relative
from pytest_skill_eval.scaffold import Scaffold, SkillMetadata, build_scaffold, read_skill

if TYPE_CHECKING:
    import git

__all__ = ["InitReport", "init_skill", "render_report"]

@dataclass(frozen=True, slots=True)
class InitReport:
    root: Path  # the definition root: the Git work tree
    skill: SkillMetadata
    scaffold: Scaffold
    head: str  # the commit HEAD named when init ran
    notes: tuple[str, ...] = ()


def init_skill(skill_dir: Path, cwd: Path) -> InitReport:
    """Write the scaffold of the skill at *skill_dir* (from *cwd*) and say what was written."""
    given = skill_dir
    skill_dir = cwd / skill_dir
    if skill_dir.name == "SKILL.md" and skill_dir.is_file():
        skill_dir, given = skill_dir.parent, given.parent
    if not skill_dir.is_dir():
        raise InitRefusedError(f"{given}: expected a skill directory (one holding a SKILL.md), found "
                          + ("a file" if skill_dir.exists() else "nothing there"))
    skill_file = skill_dir / "SKILL.md"
    shown = str(given / "SKILL.md")
    text = _read_skill_file(skill_file, shown)
    root, repo = _work_tree(skill_dir.resolve(), given)
    rel = _skill_path(root, skill_dir.resolve(), given)
    skill = read_skill(text, shown, rel)
    scaffold = build_scaffold(skill)
    if scaffold.directory.casefold() == RUNS_TREE:
        raise InitRefusedError(f'{shown}: the skill name "{skill.name}" would put its suite in {RUNS_TREE}/, '
                          "where results are stored; rename the skill")
    head = _head_holding(repo, root, skill)
    _refuse_existing(root, scaffold)
    notes = list(scaffold.notes)
    if repo.is_dirty(untracked_files=True, path=rel):
        notes.append(f"{rel} has changes that are not committed: the candidate has them and the baseline does not "
                     "(the description group is invalid while they go beyond the frontmatter description)")
    _write_all(root, scaffold)
    return InitReport(root=root, skill=skill, scaffold=scaffold, head=head, notes=tuple(notes))


def _read_skill_file(path: Path, shown: str) -> str:
    if not path.is_file():
        what = "a directory" if path.is_dir() else "something that is not a regular file" if path.exists() else "none"
        raise SkillFileError(f"{shown}: expected the skill's SKILL.md (its frontmatter names and describes it), found {what}")
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillFileError(f"{shown}: expected UTF-8 text, found byte 0x{data[exc.start]:02x} at offset {exc.start}") from None


def _work_tree(skill_dir: Path, given: Path) -> tuple[Path, git.Repo]:
    import git  # GitPython, as the sources use it

    try:
        repo = git.Repo(skill_dir, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise InitRefusedError(
            f"{given} is not inside a Git repository. The definition root is the Git work tree and the baseline "
            "is the skill as committed at HEAD, so init needs both: run `git init` at the top of the project that "
            "holds the skill, commit the skill (`git add <skill-dir> && git commit -m 'Add the skill'`), "
            "then run skill-eval init again"
        ) from None
    if repo.working_tree_dir is None:
        raise InitRefusedError(f"{given} is inside a bare Git repository, which has no work tree to be the definition root")
    return Path(repo.working_tree_dir).resolve(), repo


def _skill_path(root: Path, skill_dir: Path, given: Path) -> str:
    rel = skill_dir.relative_to(root).as_posix()
    if rel == ".":
        raise InitRefusedError(
            f"{given} is the top of its Git work tree, which is the definition root: a skill path may not name the "
            "root itself (the whole repository would be the skill). Move the skill into a subdirectory such as "
            "skills/<name>/, commit, and run skill-eval init on that"
        )
    problem = check_relative(rel) or evidence_tree_problem(rel)
    if problem is not None:
        raise InitRefusedError(f"{given}: the skill's path in the work tree {root} cannot be declared: {problem}")
    return rel


def _head_holding(repo: git.Repo, root: Path, skill: SkillMetadata) -> str:
    fix = (f"commit the skill first: git -C {shlex.quote(str(root))} add {shlex.quote(skill.path)} && "
           f"git -C {shlex.quote(str(root))} commit -m {shlex.quote(f'Add the {skill.name} skill')}")
    if not repo.head.is_valid():
        raise InitRefusedError(f"the Git repository {root} has no commit yet, and the baseline is the skill as committed "
                          f"at HEAD: {fix}")
    commit = repo.head.commit
    try:
        commit.tree / skill.path / "SKILL.md"
    except KeyError:
        raise InitRefusedError(f"{skill.path}/SKILL.md is not in the commit at HEAD ({commit.hexsha[:12]}), and the "
                          f"baseline is the skill as committed there: {fix}") from None
    return commit.hexsha


def _refuse_existing(root: Path, scaffold: Scaffold) -> None:
    taken = [f.path for f in scaffold.files if os.path.lexists(root / f.path)]
    directory = root / scaffold.directory
    for parent in (directory.parent, directory):
        if os.path.lexists(parent) and not parent.is_dir():
            taken.insert(0, parent.relative_to(root).as_posix())
    if taken:
        listed = "\n".join(f"  {path}" for path in taken)
        raise InitRefusedError(f"init never overwrites, and these exist already under {root}:\n{listed}\n"
                          f"edit them, or move them away and run skill-eval init again")
    real = Path(os.path.realpath(directory))
    if not real.is_relative_to(root):
        raise InitRefusedError(f"{scaffold.directory} resolves to {real}, outside the definition root {root}")


def _write_all(root: Path, scaffold: Scaffold) -> None:
    written: list[Path] = []
    for item in scaffold.files:
        target = root / item.path
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            _write_new(target, item.text)
        except OSError as exc:
            for path in written:
                path.unlink()
            why = (f"init never overwrites, and {item.path} appeared while it was writing"
                   if isinstance(exc, FileExistsError) else f"init could not write {item.path}: {exc.strerror or exc}")
            raise InitRefusedError(f"{why}; nothing was left written") from None
        written.append(target)


def _write_new(target: Path, text: str) -> None:
    """Write *target* whole, or not at all; never replace an existing file (link, unlike rename, refuses)."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, shared_mode())  # a suite to commit and share: the umask decides, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.link(tmp, target)
    finally:
        os.unlink(tmp)


def render_report(report: InitReport, cwd: Path) -> str:
    """What was written and the exact next command (pure: *cwd* is the resolved current directory)."""
    scaffold, skill = report.scaffold, report.skill
    command = f"pytest --skill-eval {shlex.quote(scaffold.suite)}"
    if cwd != report.root:
        command = f"cd {shlex.quote(str(report.root))} && {command}"
    lines = [f'Wrote the evaluation of skill "{skill.name}" ({skill.path}) under {report.root}:']
    lines += [f"  {item.path}" for item in scaffold.files]
    lines.append(f"baseline: {skill.path} as committed at HEAD ({report.head[:12]}); candidate: the working tree")
    lines += [f"note: {note}" for note in report.notes]
    lines += [
        f"Next, run it offline with the scripted stand-in model, from the definition root {report.root}:",
        f"  {command}",
        f"To use a real model, edit the groups as {scaffold.directory}/README.md says.",
    ]
    return "\n".join(lines) + "\n"
