"""The scripted stand-in model served over HTTP on 127.0.0.1 (standard library only).

:class:`ScriptedModelServer` speaks just enough of three provider APIs for pi's clients,
each at its own path (:mod:`.wires`): OpenAI chat completions (``POST /v1/chat/completions``),
Anthropic Messages (``POST /v1/messages``) and OpenAI Responses (``POST /v1/responses``),
streamed as server-sent events. Each model id maps to one script; replies come from
:func:`~pytest_skill_eval.scripted.replies.plan_reply`. It is a stand-in, not a model, and
says so in its provider entry, its response headers and every text it makes up itself.

Streams use chunked transfer encoding on keep-alive connections, so a scripted
``disconnect`` is an unmistakably broken response rather than an ordinary end of body.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

from pytest_skill_eval.errors import ScriptError
from pytest_skill_eval.scripted.chat_completions import (
    stream_chunks,
)
from pytest_skill_eval.scripted.format import Script, load_script
from pytest_skill_eval.scripted.handler import HANDLER_THREAD_NAME, RequestRecord, ScriptedHTTPServer
from pytest_skill_eval.scripted.pacing import Latency
from pytest_skill_eval.scripted.wires import APIS, ID_PREFIX, Api

__all__ = [
    "APIS",
    "API_KEY",
    "Api",
    "DISPLAY_NAME",
    "HANDLER_THREAD_NAME",
    "Latency",
    "PROVIDER",
    "RequestRecord",
    "ScriptedModelServer",
    "stream_chunks",
]

PROVIDER = "scripted"
"""The pi provider name the stand-in is registered under in ``models.json``."""

API_KEY = "scripted-stand-in"
"""A literal, non-secret key: pi only lists providers that have one."""

DISPLAY_NAME = "Scripted stand-in (not a real model)"
_MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_JOIN_SECONDS = 2.0


class ScriptedModelServer:
    """A deterministic OpenAI-compatible streaming server that replays scripts.

    Use as a context manager, or call :meth:`start` and :meth:`stop`. Register each
    script under a model id, then write :meth:`provider_config` into pi's
    ``models.json`` as provider :data:`PROVIDER`.
    """

    def __init__(self, api: Api = "openai-completions", seed: str = "", latency: Latency | None = None, *,
                 keep_bodies: bool = False, history: int | None = None) -> None:
        if api not in APIS:
            raise ValueError(f"scripted model server: expected an api of {', '.join(APIS)}, found {api!r}")
        #: the wire :meth:`provider_config` writes by default; every wire is served at its path
        self.api: Api = api
        #: the seed of the weighted alternatives (see :class:`~.replies.Arm`)
        self.seed = seed
        #: the emulated latency of every message reply, under the script's and the step's settings
        self.latency = Latency() if latency is None else latency
        #: whether :meth:`requests` keeps each request's decoded body (metadata only by default)
        self.keep_bodies = keep_bodies
        self._lock = threading.Lock()
        self._scripts: dict[str, tuple[Path, Script]] = {}
        #: how many of the latest requests :meth:`requests` keeps (None: every one); an
        #: evaluator session bounds it, or its records grow with every request of every group
        self.history = history
        self._records: deque[RequestRecord] = deque(maxlen=history)
        self._responses = 0
        self._stopping = threading.Event()
        self._httpd: ScriptedHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> ScriptedModelServer:
        """Bind 127.0.0.1 on a free port and serve in a daemon thread."""
        if self._httpd is not None:
            raise RuntimeError("the scripted model server is already started")
        self._stopping.clear()
        self._httpd = ScriptedHTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.01},  # stop() waits for one poll
            name="scripted-model-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, break open connections (including stalls) and wait briefly."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if thread is not None:
            thread.join(_JOIN_SECONDS)
        httpd.join_handlers(_JOIN_SECONDS)
        self._httpd = self._thread = None

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``, the provider ``baseUrl`` pi needs for OpenAI wires."""
        if self._httpd is None:
            raise RuntimeError("the scripted model server is not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def base_url_for(self, api: Api) -> str:
        """The ``baseUrl`` pi needs for *api*: Anthropic's SDK appends ``/v1/messages`` itself."""
        return self.base_url.removesuffix("/v1") if api == "anthropic-messages" else self.base_url

    # -------------------------------------------------------------- registration

    def register(self, name: str, script_path: Path) -> None:
        """Serve the script at ``script_path`` as model id ``name``.

        Loads and validates the script now (raising :class:`ScriptError`). Registering
        a name again with the same file is a no-op; with another file it is an error.
        """
        if not isinstance(name, str) or not _MODEL_NAME.fullmatch(name):
            raise ScriptError(
                f"scripted model name: expected letters, digits, '.', '_' or '-' "
                f"(not starting with a punctuation mark), found {name!r}"
            )
        path = Path(script_path).resolve()
        with self._lock:
            known = self._scripts.get(name)
        if known is None:
            script = load_script(path)
            with self._lock:
                # setdefault: a concurrent register() of the same name may have won
                known = self._scripts.setdefault(name, (path, script))
        if known[0] != path:
            raise ScriptError(
                f"scripted model {name!r}: expected one script per name, found it "
                f"registered to {known[0]} and now to {path}"
            )

    def provider_config(self, names: Iterable[str], api: Api | None = None) -> dict[str, Any]:
        """The ``models.json`` entry for provider :data:`PROVIDER` listing ``names``.

        *api* (default: the server's :attr:`api`) is the wire pi will speak to it.
        """
        api = self.api if api is None else api
        models = []
        with self._lock:
            registered = dict(self._scripts)
        for name in dict.fromkeys(names):
            if name not in registered:
                raise ScriptError(
                    f"scripted model {name!r}: expected a registered name "
                    f"({', '.join(sorted(registered)) or 'none registered'}), found none"
                )
            models.append({
                "id": name,
                "name": f"{DISPLAY_NAME}: {name}",
                "reasoning": False,
                "input": ["text"],
                # Far above any usage the stand-in reports, so pi never sees an overflow.
                "contextWindow": 1_000_000,
                "maxTokens": 32_000,
                # a script without "pricing" leaves the rates 0: pi's cost is then unavailable
                "cost": dict(registered[name][1].pricing or {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}),
            })
        if api != "openai-completions":
            return {"baseUrl": self.base_url_for(api), "api": api, "apiKey": API_KEY, "models": models}
        return {
            "baseUrl": self.base_url,
            "api": "openai-completions",
            "apiKey": API_KEY,
            "compat": {
                "supportsDeveloperRole": False,
                "supportsReasoningEffort": False,
                "supportsStore": False,
            },
            "models": models,
        }

    def requests(self) -> tuple[RequestRecord, ...]:
        """Every request answered so far (the latest :attr:`history`), in arrival order."""
        with self._lock:
            return tuple(self._records)

    # ------------------------------------------------- used by the request handler

    def _script_for(self, name: str) -> Script | None:
        with self._lock:
            known = self._scripts.get(name)
        return None if known is None else known[1]

    def _registered(self) -> list[str]:
        with self._lock:
            return sorted(self._scripts)

    def _record(self, record: RequestRecord) -> None:
        if not self.keep_bodies and record.body is not None:
            record = dataclasses.replace(record, body=None)
        with self._lock:
            self._records.append(record)

    def _next_response_id(self, api: Api = "openai-completions") -> str:
        with self._lock:
            self._responses += 1
            return f"{ID_PREFIX[api]}{self._responses}"
