"""What grading sees of one variant run: plain frozen values read back from evidence.

``evidence.load_observation`` builds a :class:`RunObservation` from a persisted run
directory; ``grading`` judges expectations from it and nothing else, so a stored
result can be re-graded without running the agent again.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pytest_skill_eval.codec import Layout, meta

RunState = Literal["complete", "invalid", "infrastructure-failed", "cancelled", "not-selected"]


class FileTree(Mapping[str, bytes]):
    """A stored workspace tree as grading sees it: a map of slash-separated relative path to
    bytes that reads a file only when it is looked up.

    The listing, sizes and (when a manifest recorded them) digests are known without reading
    any file, so comparing two trees or asking whether a path exists costs no file reads,
    and memory grows with the bytes actually checked, not with the tree.
    """

    __slots__ = ("_root", "_sizes", "_digests", "_verify")

    def __init__(self, root: str, sizes: Mapping[str, int], digests: Mapping[str, str] | None = None,
                 verify: frozenset[str] = frozenset()) -> None:
        self._root = root
        self._sizes = dict(sorted(sizes.items()))
        self._digests = dict(digests or {})
        # files with other hard links: their bytes must hash to the manifest's digest when read
        self._verify = verify

    def _open(self, key: str) -> int:
        # never through a link, never blocking on a FIFO swapped in after the listing
        fd = os.open(os.path.join(self._root, *key.split("/")), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(f"{key}: no longer a regular file")
        return fd

    def __getitem__(self, key: str) -> bytes:
        if key not in self._sizes:
            raise KeyError(key)
        with os.fdopen(self._open(key), "rb") as handle:
            data = handle.read()
        if key in self._verify and hashlib.sha256(data).hexdigest() != self._digests.get(key):
            raise OSError(f"{key}: a file with several hard links that does not hold the bytes its manifest records")
        return data

    def __contains__(self, key: object) -> bool:
        return key in self._sizes

    def __iter__(self) -> Iterator[str]:
        return iter(self._sizes)

    def __len__(self) -> int:
        return len(self._sizes)

    def size(self, key: str) -> int:
        return self._sizes[key]

    def digest(self, key: str) -> str:
        """The sha256 of the stored file *key*: from the manifest, else read (streamed) once."""
        found = self._digests.get(key)
        if found is None:
            if key not in self._sizes:
                raise KeyError(key)
            digest = hashlib.sha256()
            with os.fdopen(self._open(key), "rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
            found = self._digests[key] = digest.hexdigest()
        return found


def file_size(files: Mapping[str, bytes], path: str) -> int:
    """The size of *path* in *files* (without reading it when *files* is a :class:`FileTree`)."""
    return files.size(path) if isinstance(files, FileTree) else len(files[path])


def same_file(a: Mapping[str, bytes], b: Mapping[str, bytes], path: str) -> bool:
    """Whether *path* holds the same bytes in *a* and *b* (by digest between two :class:`FileTree`)."""
    if isinstance(a, FileTree) and isinstance(b, FileTree):
        return a.size(path) == b.size(path) and a.digest(path) == b.digest(path)
    return a[path] == b[path]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the subject made, with its result as the host reported it."""

    #: not stored: ``transcript.json`` keeps it as the enclosing turn's ``index``
    turn: int = field(metadata=meta(parent="index"))
    id: str
    name: str
    arguments: dict[str, Any] = field(compare=False, hash=False)
    result_text: str | None = None
    is_error: bool = False
    blocked: bool = False
    event_index: int = -1


@dataclass(frozen=True, slots=True)
class Turn:
    """One declared user turn, from prompt to settlement."""

    #: the key order of a turn in ``transcript.json``
    STORED: ClassVar[Layout] = Layout(order=("index", "prompt", "sent", "response", "stop_reason", "error", "settled",
                                             "tool_calls"))
    index: int
    prompt: str
    sent: str
    response: str
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: str | None = None
    error: str | None = None
    settled: bool = True


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """One model request observed by the context observer (numbered per turn, from 1)."""

    turn: int
    request: int
    system_prompt: str
    provider_context: str


@dataclass(frozen=True, slots=True)
class RunObservation:
    """Everything grading may read about one variant run.

    Paths in ``workspace_root``, ``skill_roots``, ``target_file`` and
    ``context_roots`` are absolute paths as the host saw them during the run.
    File maps use slash-separated paths relative to the workspace.
    """

    variant: Literal["baseline", "candidate"]
    state: RunState
    workspace_root: str
    skill_roots: tuple[str, ...]
    target_file: str | None
    context_roots: tuple[str, ...]
    turns: tuple[Turn, ...]
    initial_files: Mapping[str, bytes] = field(compare=False, hash=False, default_factory=dict)
    final_files: Mapping[str, bytes] = field(compare=False, hash=False, default_factory=dict)
    turn_files: Mapping[int, Mapping[str, bytes]] = field(compare=False, hash=False, default_factory=dict)
    context_requests: tuple[ContextRequest, ...] = ()
    #: evidence files stored with inherited values replaced by the redaction marker, keyed by
    #: run-directory-relative path (``workspace/out.json``, ``turns/2/workspace/out.json``)
    redactions: Mapping[str, int] = field(compare=False, hash=False, default_factory=dict)

    @property
    def final_response(self) -> str:
        return self.turns[-1].response if self.turns else ""
