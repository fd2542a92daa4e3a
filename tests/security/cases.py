"""One hostile case: how it tampers with a scene, and which commands must name what it broke.

Every command must answer every case without a traceback, a hang, a read from outside the
result or a write outside its destination (``Scene.command`` checks that); a command in
``by`` must also answer with a located error naming ``named`` (it reads what was broken).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .hostile import Scene


@dataclass(frozen=True)
class Case:
    id: str
    tamper: Callable[[Scene], None]
    named: str
    by: frozenset[str]

    def check(self, scene: Scene, command: str) -> None:
        self.tamper(scene)
        proc = scene.command(command)
        if command in self.by:
            out = proc.stdout + proc.stderr
            assert proc.returncode != 0 or "problem" in out, (command, proc.returncode, out)
            assert self.named in out, (command, self.named, out)


def case(id: str, named: str, by: str = "") -> Callable[[Callable[[Scene], None]], Case]:
    def wrap(tamper: Callable[[Scene], None]) -> Case:
        return Case(id, tamper, named, frozenset(by.split()))
    return wrap
