"""A definition cannot point a built-in provider at another server through the environment.

First the threat, on the real host: the AWS SDK bundled in pi reads
``AWS_ENDPOINT_URL_BEDROCK_RUNTIME`` (``AWS_ENDPOINT_URL_`` + the service id, a family the
scan finds and the old suffix guesses missed) and sends the Bedrock request, signed with the
credential it was given, to whatever server that names. Then the same names in a definition:
refused at load time, and by the launch layer when the loader is bypassed.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pytest_skill_eval.definitions.loading import load_group
from pytest_skill_eval.errors import DefinitionError, LaunchRefusedError
from pytest_skill_eval.host.install import HostInstallation
from pytest_skill_eval.host.launch import LaunchPlan

from .support import apply_edits, spec_doc, write_json, write_suite_tree

pytestmark = pytest.mark.pi

MODEL = "amazon.nova-micro-v1:0"
KEY_ID = "AKIAPROBEPROBEPROBE1"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": "probe-secret-value-0123456789", "AWS_REGION": "us-east-1"}
HOSTILE = ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "AWS_BEDROCK_FORCE_HTTP1")


@contextmanager
def _listener() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A local HTTP server that records each request and answers 500."""
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            seen.append({"path": self.path, "authorization": self.headers.get("authorization", "")})
            self.send_response(500)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _bedrock_plan(tmp_path: Path, host: HostInstallation) -> LaunchPlan:
    for sub in ("ws", "agent", "home/tmp"):
        (tmp_path / sub).mkdir(parents=True, exist_ok=True)
    return LaunchPlan(host=host, mode="json", workspace=tmp_path / "ws", agent_dir=tmp_path / "agent", home=tmp_path / "home",
                      skills=(), extensions=(), tools=(), provider="amazon-bedrock", model=MODEL, thinking=None,
                      session_dir=None, prompts=("hello",), inherited_env=CREDENTIALS)  # fmt: skip


def test_the_scanned_endpoint_family_redirects_bedrock_on_the_real_host(tmp_path: Path, pi_host: HostInstallation) -> None:
    """Why the names are launch-control: set directly (no policy), pi sends the signed request there."""
    plan = _bedrock_plan(tmp_path, pi_host)
    with _listener() as (url, seen):
        env = {**plan.env(), "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": url, "AWS_BEDROCK_FORCE_HTTP1": "1"}
        done = subprocess.run(plan.argv(), env=env, cwd=plan.workspace, capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)  # fmt: skip
    assert seen, f"pi did not call the listener; the table's reason for these names needs review:\n{done.stdout[-2000:]}"
    assert seen[0]["path"].startswith("/model/amazon.nova-micro-v1")
    assert f"Credential={KEY_ID}/" in seen[0]["authorization"]


def test_a_definition_that_redirects_bedrock_is_refused_at_load_and_at_launch(tmp_path: Path, pi_host: HostInstallation) -> None:
    write_suite_tree(tmp_path)
    for field, value, pointers in (
        ("literal", {HOSTILE[0]: "http://127.0.0.1:9", HOSTILE[1]: "1"}, [f"/runtime/environment/literal/{n}" for n in HOSTILE]),
        ("inherit", list(HOSTILE), ["/runtime/environment/inherit/0", "/runtime/environment/inherit/1"]),
    ):
        doc = apply_edits(spec_doc("runtime"), {"/runtime/environment": {"literal": {}, "inherit": [], field: value}})
        path = write_json(tmp_path / f"{field}.json", doc)
        with pytest.raises(DefinitionError) as caught:
            load_group(path, tmp_path)
        assert sorted(problem.pointer for problem in caught.value.problems) == sorted(pointers)
        assert all("reserved (launch-control)" in problem.message for problem in caught.value.problems)
    # bypassing the loader: the launch layer refuses the plan (replace() runs its checks) ...
    plan = _bedrock_plan(tmp_path / "run", pi_host)
    for name in HOSTILE:
        with pytest.raises(LaunchRefusedError, match=f"{name!r} is reserved"):
            dataclasses.replace(plan, literal_env=((name, "1"),))
        with pytest.raises(LaunchRefusedError, match=f"{name!r} is reserved"):
            dataclasses.replace(plan, inherited_env={**CREDENTIALS, name: "1"})
    # ... and a plan changed after its checks still hands the child neither name
    object.__setattr__(plan, "literal_env", ((HOSTILE[0], "http://127.0.0.1:9"), (HOSTILE[1], "1")))
    object.__setattr__(plan, "inherited_env", {**CREDENTIALS, HOSTILE[0]: "http://127.0.0.1:9"})
    probe = tmp_path / "env.mjs"
    probe.write_text("process.stdout.write(JSON.stringify(process.env));\n", encoding="utf-8")
    seen = json.loads(subprocess.run([str(pi_host.node), str(probe)], env=plan.env(), capture_output=True, text=True,
                                     check=True, timeout=60).stdout)  # fmt: skip
    assert not set(HOSTILE) & set(seen)
    assert seen["AWS_ACCESS_KEY_ID"] == KEY_ID  # the user's own credential still passes through inherit

