"""Snapshots of declared paths from the working tree or from one exact Git commit.

A snapshot copies regular files and directories only. Anything else (a submodule, a
symlink that leaves the snapshot, a device) is refused with a SourceError that makes
the variant ``invalid``.
"""

from __future__ import annotations

import difflib
import errno
import json
import os
import posixpath
import re
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_skill_eval.errors import SourceError, suggestion_text
from pytest_skill_eval.paths import unsafe_character

if TYPE_CHECKING:
    import git

_GIT_TREE, _GIT_FILE, _GIT_EXEC, _GIT_LINK, _GIT_SUBMODULE = 0o040000, 0o100644, 0o100755, 0o120000, 0o160000
#: Links followed in one chain before it counts as a loop (Linux MAXSYMLINKS).
_MAX_SYMLINKS = 40


@dataclass(frozen=True, slots=True)
class SourceIdentity:
    """What a variant's source was: declared and resolved."""

    kind: str
    ref: str | None
    commit: str | None
    root: str

    def to_json(self) -> dict[str, str | None]:
        return {"kind": self.kind, "ref": self.ref, "commit": self.commit, "root": self.root}


def _contained(root: Path, rel: str) -> Path:
    candidate = root / rel
    real_root = root.resolve()
    real = candidate.resolve()
    if real != real_root and not real.is_relative_to(real_root):
        raise SourceError(f"{rel}: resolves outside the definition root ({real})")
    return candidate


def not_found_message(root: Path, rel: str) -> str:
    """A declared working-tree path is missing: say where the definition root is, and where it is not.

    Declared paths resolve from the directory pytest runs in, so the commonest cause is
    running from a subdirectory (such as the one holding the suite) instead of the
    repository top: when an ancestor holds the path, the message says to run from there.
    """
    message = f"{rel}: not found under the definition root {root} (the current directory)"
    for ancestor in Path(os.path.abspath(root)).parents:
        if os.path.lexists(ancestor / rel):
            return f"{message}; it exists under {ancestor}: run from there"
    return message + suggestion_text(nearest_path(rel, lambda r: os.path.lexists(root / r), lambda d: _listdir(root / d)))


def _ref_suggestion(repo: Any, ref: str) -> str:
    """The branches and tags nearest to the unknown *ref* (``difflib``), else the ones there are
    (a repository whose only branch is ``master`` asked for ``main``)."""
    try:
        branches = [head.name for head in repo.heads]
        tags = [tag.name for tag in repo.tags]
    except (OSError, ValueError):
        return ""
    names = sorted(set(branches) | set(tags))
    if not names:
        return ""
    close = difflib.get_close_matches(ref, names, n=3, cutoff=0.5)
    if close:
        return "; did you mean " + " or ".join(json.dumps(name, ensure_ascii=False) for name in close) + "?"
    shown = [json.dumps(name, ensure_ascii=False) for name in sorted(branches)[:5]]
    listed = f"branches: {', '.join(shown)}" if shown else ""
    if tags:
        more = f" and {len(tags) - 5} more" if len(tags) > 5 else ""
        listed += ("; " if listed else "") + "tags: " + ", ".join(json.dumps(t, ensure_ascii=False) for t in sorted(tags)[:5]) + more
    return f"; the repository has {listed}"


def _listdir(directory: Path) -> list[str]:
    try:
        return sorted(os.listdir(directory))
    except OSError:
        return []


def nearest_path(rel: str, exists: Callable[[str], bool], entries: Callable[[str], list[str]]) -> str | None:
    """The existing path nearest to the missing *rel*: each missing segment, from the top, replaced by
    the closest name in its directory (``difflib``); None when one has no close name."""
    fixed = [part for part in posixpath.normpath(rel).split("/") if part not in ("", ".")]
    if not fixed or ".." in fixed:
        return None
    for i in range(len(fixed)):
        if exists("/".join(fixed[: i + 1])):
            continue
        close = difflib.get_close_matches(fixed[i], entries("/".join(fixed[:i])), n=1, cutoff=0.6)
        if not close:
            return None
        fixed[i] = close[0]
    found = "/".join(fixed)
    return found if found != rel and exists(found) else None


#: What reading a declared working-tree path can fail with because of the path or the tree
#: itself (too long, a link loop, no permission, a file used as a directory): the variant's
#: problem, not the evaluator's; anything else (a full disk) stays an OSError.
_SOURCE_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.ELOOP, errno.EACCES, errno.EPERM, errno.ENOTDIR,
                            errno.EISDIR, errno.ENOENT})


def copy_working_tree(root: Path, rel: str, dest: Path) -> None:
    """Copy ``root/rel`` (file or directory) to *dest*, refusing escapes and odd entries.

    A path the file system will not read (longer than it takes, a symlink loop, no
    permission) is a SourceError naming it, so the variant is ``invalid`` with the reason
    instead of the run stopping as if evidence could not be written.
    """
    shown = rel if len(rel) <= 120 else f"{rel[:100]}… ({len(rel.encode())} bytes)"
    try:
        _copy_working_tree(root, rel, dest)
    except OSError as exc:
        if exc.errno not in _SOURCE_ERRNOS:
            raise
        why = exc.strerror
    except RecursionError:  # os.walk recurses per level (Python < 3.12)
        why = "it nests directories deeper than a snapshot follows"
    except RuntimeError as exc:  # pathlib's resolve() on a symlink loop (Python < 3.13)
        if not str(exc).startswith("Symlink loop"):
            raise
        why = str(exc)
    else:
        return
    remove_tree(dest)
    raise SourceError(f"{shown}: cannot be read from the working tree: {why}")


def remove_tree(top: Path) -> None:
    """Remove *top* however deep it nests: level by level on an explicit stack, where
    ``shutil.rmtree`` recurses once per level and fails past Python's recursion limit."""
    stack = [str(top)]
    while stack:
        here = stack[-1]
        try:
            entries = list(os.scandir(here))
        except FileNotFoundError:
            stack.pop()
            continue
        except NotADirectoryError:
            os.unlink(here)
            stack.pop()
            continue
        subdirs = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.path)
        if subdirs:
            stack.extend(subdirs)
        else:
            os.rmdir(here)
            stack.pop()


def _copy_working_tree(root: Path, rel: str, dest: Path) -> None:
    src = _contained(root, rel)
    if not src.exists():
        raise SourceError(not_found_message(root, rel))
    real_src = src.resolve()
    if real_src.is_file():
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(real_src, dest)
        return
    for dirpath, dirnames, filenames in os.walk(real_src, followlinks=False):
        here = Path(dirpath)
        out = dest / here.relative_to(real_src)
        out.mkdir(parents=True, exist_ok=True)
        for name in sorted(dirnames + filenames):
            entry = here / name
            mode = entry.lstat().st_mode
            if stat.S_ISLNK(mode):
                target = entry.resolve()
                if not (target == real_src or target.is_relative_to(real_src)):
                    raise SourceError(f"{rel}: {entry.relative_to(real_src)} is a symlink that leaves the snapshot")
                if target.is_dir():
                    raise SourceError(f"{rel}: {entry.relative_to(real_src)} is a symlink to a directory (unsupported)")
                shutil.copyfile(target, out / name)
            elif stat.S_ISREG(mode):
                shutil.copyfile(entry, out / name)
            elif not stat.S_ISDIR(mode):
                raise SourceError(f"{rel}: {entry.relative_to(real_src)} is not a regular file or directory")


_REFLOG_INDEX = re.compile(r"@\{(\d+)\}")


def resolve_commit(repo: git.Repo, ref: str) -> git.Commit:
    """The commit *ref* names in *repo* (GitPython's reading of Git's revision syntax), or a
    SourceError saying it does not resolve, with the nearest branch and tag names.

    GitPython refuses forms it does not read with other exceptions than ``BadName``: a
    date or ``@{upstream}`` (NotImplementedError, BadName), a reflog index past the log
    (IndexError), a tree, blob or tag (ValueError), ``^main`` (ValueError); each is this
    one error, never a crash. A ref with a control character is refused before GitPython
    sees it (a newline would reach ``git cat-file --batch-check`` as a second request).
    """
    unsafe = unsafe_character(ref)
    if unsafe is not None:
        raise SourceError(f"git source: ref {ref!r} does not resolve to a commit "
                          f"(a Git revision holds no control characters; found {unsafe})")
    huge = next((m.group(1) for m in _REFLOG_INDEX.finditer(ref) if int(m.group(1)) >= 2**31), None)
    if huge is not None:  # GitPython wraps such an index around and answers with the ref itself
        raise SourceError(f"git source: ref {ref!r} does not resolve to a commit (Invalid revlog index: {huge})")
    try:
        commit = repo.commit(ref)
        commit.tree  # noqa: B018 - a well-formed name of no stored object (forty zeros) fails here
    except Exception as exc:  # noqa: BLE001 - GitPython raises BadName, ValueError, IndexError, NotImplementedError, ...
        why = f"GitPython does not read this form: {exc}" if isinstance(exc, NotImplementedError) else str(exc)
        raise SourceError(f"git source: ref {ref!r} does not resolve to a commit ({why}){_ref_suggestion(repo, ref)}") from None
    return commit



class GitSource:
    """One exact commit of the repository that holds the definition root."""

    def __init__(self, root: Path, ref: str) -> None:
        import git  # GitPython: imported here so collection never pays for it

        try:
            self.repo = git.Repo(root, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise SourceError(f"git source {ref!r}: {root} is not inside a Git repository") from None
        self.commit = resolve_commit(self.repo, ref)
        self.ref = ref
        worktree = Path(self.repo.working_tree_dir or root).resolve()
        # declared paths are relative to the definition root; the tree is relative to the repo top
        self.prefix = root.resolve().relative_to(worktree).as_posix()

    def identity(self, root: Path) -> SourceIdentity:
        return SourceIdentity("git", self.ref, self.commit.hexsha, str(root))

    def copy(self, rel: str, dest: Path) -> None:
        """Materialise ``rel`` as it is in the commit."""
        path = posixpath.normpath(posixpath.join(self.prefix, rel)) if self.prefix != "." else posixpath.normpath(rel)
        if path.startswith("../") or path == "..":
            raise SourceError(f"{rel}: leaves the repository")
        try:
            obj = self.commit.tree / path
        except KeyError:
            base = "" if self.prefix == "." else f"{self.prefix}/"
            suggestion = nearest_path(rel, lambda r: self._lookup(base + r) is not None, lambda d: self._names(base + d))
            raise SourceError(f"{rel}: not found in commit {self.commit.hexsha[:12]} (ref {self.ref!r})"
                              + suggestion_text(suggestion)) from None
        try:
            self._materialise(obj, dest, rel, path)
        except RecursionError:
            why = "nests directories deeper than a snapshot follows"
        except OSError as exc:
            if exc.errno != errno.ENAMETOOLONG:
                raise
            why = f"holds a path longer than the file system takes ({exc.strerror})"
        else:
            return
        remove_tree(dest)  # what was written so far: too deep for shutil.rmtree, which recurses
        raise SourceError(f"{rel}: {why}")

    def _lookup(self, path: str) -> Any:
        path = path.rstrip("/")
        try:
            return self.commit.tree / path if path else self.commit.tree
        except KeyError:
            return None

    def _names(self, directory: str) -> list[str]:
        tree = self._lookup(directory)
        if tree is None or getattr(tree, "type", None) != "tree":
            return []
        return sorted(posixpath.basename(child.path) for child in tree)

    def _materialise(self, obj: object, dest: Path, rel: str, top: str, followed: frozenset[str] = frozenset()) -> None:
        if getattr(obj, "type", None) == "submodule":
            raise SourceError(f"{rel}: {obj.path} is a submodule (unsupported Git entry)")  # type: ignore[attr-defined]
        mode = obj.mode  # type: ignore[attr-defined]
        if mode == _GIT_TREE:
            dest.mkdir(parents=True, exist_ok=True)
            for child in obj:  # type: ignore[attr-defined]
                # a gitlink has no usable .name without .gitmodules: name it by its path
                self._materialise(child, dest / posixpath.basename(child.path), rel, top)
        elif mode in (_GIT_FILE, _GIT_EXEC):
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(obj.data_stream.read())  # type: ignore[attr-defined]
        elif mode == _GIT_LINK:
            target = obj.data_stream.read().decode("utf-8", "replace")  # type: ignore[attr-defined]
            where = posixpath.normpath(posixpath.join(posixpath.dirname(obj.path), target))  # type: ignore[attr-defined]
            if target.startswith("/") or not (where == top or where.startswith(top + "/")):
                raise SourceError(f"{rel}: {obj.path} is a symlink that leaves the snapshot")  # type: ignore[attr-defined]
            try:
                linked = self.commit.tree / where
            except KeyError:
                raise SourceError(f"{rel}: {obj.path} is a dangling symlink") from None  # type: ignore[attr-defined]
            if linked.mode == _GIT_TREE:
                raise SourceError(f"{rel}: {obj.path} is a symlink to a directory (unsupported)")  # type: ignore[attr-defined]
            if where in followed or len(followed) >= _MAX_SYMLINKS:  # a -> b -> a never ends at a file
                raise SourceError(f"{rel}: {obj.path} is a symlink loop (or a chain of more than "  # type: ignore[attr-defined]
                                  f"{_MAX_SYMLINKS} links, which the kernel would not follow either)")
            self._materialise(linked, dest, rel, top, followed | {where})
        elif mode == _GIT_SUBMODULE:
            raise SourceError(f"{rel}: {obj.path} is a submodule (unsupported Git entry)")  # type: ignore[attr-defined]
        else:
            raise SourceError(f"{rel}: {obj.path} has unsupported Git mode {mode:o}")  # type: ignore[attr-defined]
