"""Reaping a host's whole process tree (psutil): children first, TERM then KILL."""

from __future__ import annotations

import psutil


def kill_process_tree(pid: int, *, grace: float = 3.0) -> list[int]:
    """Terminate *pid* and every descendant; return the pids that had to be killed.

    Descendants are collected before anything is signalled, so a child re-parented to
    init when its parent dies is still reaped.
    """
    try:
        root = psutil.Process(pid)
        procs = root.children(recursive=True) + [root]
    except psutil.NoSuchProcess:
        return []
    for proc in procs:
        try:
            proc.terminate()
        except psutil.NoSuchProcess:
            pass
    _gone, alive = psutil.wait_procs(procs, timeout=grace)
    for proc in alive:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=grace)
    return [p.pid for p in alive]
