"""Reading a directory tree back: its regular files as bytes, and their sha256 fingerprints."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def read_files(root: Path) -> dict[str, bytes]:
    """All regular files under *root*, keyed by slash-separated relative path."""
    files: dict[str, bytes] = {}
    if not root.is_dir():
        return files
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                files[path.relative_to(root).as_posix()] = path.read_bytes()
    return dict(sorted(files.items()))


def fingerprint_tree(root: Path) -> dict[str, str]:
    """sha256 of every file under *root* (or of *root* itself when it is a file)."""
    if root.is_file():
        return {".": hashlib.sha256(root.read_bytes()).hexdigest()}
    return {rel: hashlib.sha256(data).hexdigest() for rel, data in read_files(root).items()}
