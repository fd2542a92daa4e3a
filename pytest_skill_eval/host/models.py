"""Which model a group runs against, and the provider entries its agent dir needs.

A group's ``model`` names ``provider/model``. The provider ``scripted`` is the embedded
stand-in (``scripted/<script-name>``), served by one :class:`ScriptedModelServer` per
process, started only when a selected group uses it. Any other provider is pi's own or
one from the user's ``models.json``; credentials come from ``environment.inherit`` or
the configured auth file, never from here. A group without ``model`` leaves the choice to
pi, which picks a model of a provider it has a credential for (its own default); the
scripted stand-in is used only when a group names ``scripted/<name>``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_skill_eval.definitions.model import Group
from pytest_skill_eval.errors import ScriptError
from pytest_skill_eval.paths import check_relative

if TYPE_CHECKING:
    from pytest_skill_eval.scripted.server import ScriptedModelServer

SCRIPTED = "scripted"
#: requests the session's scripted stand-in keeps (its ``requests()``): a window, not the session
REQUEST_HISTORY = 16


class ModelRouter:
    """Implements the engine's ``ModelBackend``: resolves a group's model to providers."""

    def __init__(self, root: Path, script_dirs: Sequence[Path] = (), *, seed: str = "",
                 scripts: Callable[[Group, str], Path] | None = None,
                 origins: Callable[[Path], str | None] | None = None) -> None:
        self.root = root.resolve()
        self.seed = seed
        self.script_dirs = tuple(script_dirs)
        #: where a group's script comes from instead of beside its file (a rerun: the stored script)
        self.scripts = scripts
        self.origins = origins
        self._server: ScriptedModelServer | None = None
        self._lock = threading.Lock()

    def model_of(self, group: Group) -> tuple[str | None, str | None]:
        """The declared provider and model id; ``(None, None)``: pi's own default."""
        if group.model is None:
            return None, None
        return group.model.provider, group.model.model_id

    def providers_for(self, group: Group) -> tuple[str | None, str | None, dict[str, Any]]:
        provider, model_id = self.model_of(group)
        if provider != SCRIPTED or model_id is None:
            return provider, model_id, {}
        script = self.find_script(group, model_id)
        server = self.server()
        server.register(model_id, script)
        return SCRIPTED, model_id, {SCRIPTED: server.provider_config([model_id])}

    def script_path(self, group: Group) -> Path | None:
        """The script file a scripted group's model runs from; None for any other model."""
        provider, model_id = self.model_of(group)
        if provider != SCRIPTED or model_id is None:
            return None
        return self.find_script(group, model_id)

    def script_origin(self, path: Path) -> str:
        """Where a script file came from, as evidence names it: relative to the root when inside it."""
        origin = self.origins(path) if self.origins is not None else None
        if origin is not None:
            return origin
        resolved = path.resolve()
        return resolved.relative_to(self.root).as_posix() if resolved.is_relative_to(self.root) else str(path)

    def find_script(self, group: Group, name: str) -> Path:
        """``scripts/<name>.json`` beside the group file or in any directory up to the root."""
        if self.scripts is not None:
            return self.scripts(group, name)
        problem = check_relative(name)
        if problem is not None:  # the loader refuses it too; a Group built without it may not
            raise ScriptError(f"model 'scripted/{name}' names no script below scripts/: {problem}")
        tried: list[Path] = []
        here = group.path.resolve().parent
        while True:
            tried.append(here / "scripts" / f"{name}.json")
            if here == self.root or self.root not in here.parents:
                break
            here = here.parent
        tried += [d / f"{name}.json" for d in self.script_dirs]
        for candidate in tried:
            if candidate.is_file():
                return self._contained(candidate, name)
        raise ScriptError(
            f"no script for model 'scripted/{name}': looked for " + ", ".join(str(p) for p in tried)
        )

    def _contained(self, candidate: Path, name: str) -> Path:
        """*candidate* if it resolves inside the definition root or a configured script
        directory (a symlink may not lead a definition's script anywhere else)."""
        real = Path(os.path.realpath(candidate))
        roots = [self.root, *(Path(os.path.realpath(d)) for d in self.script_dirs)]
        if any(real.is_relative_to(r) for r in roots):
            return candidate
        raise ScriptError(f"the script of model 'scripted/{name}', {candidate}, resolves to {real}, outside the "
                          f"definition root {self.root}")

    def server(self) -> ScriptedModelServer:
        with self._lock:
            if self._server is None:
                from pytest_skill_eval.scripted.server import ScriptedModelServer

                # the session's stand-in keeps a few requests for diagnostics, not all of them
                self._server = ScriptedModelServer(seed=self.seed, history=REQUEST_HISTORY)
                self._server.start()
            return self._server

    def close(self) -> None:
        with self._lock:
            if self._server is not None:
                self._server.stop()
                self._server = None
