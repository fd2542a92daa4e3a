"""The environment policy is the scanned table: every entry is enforced where it must be.

The table (``pytest_skill_eval/host/env-names.json``) lists each name and family the pinned
host reads, found by ``tools/scan_host_env.py``. These tests walk it: every launch-control or
reserved entry is refused in ``literal`` with a located error, every launch-control entry is
refused in ``inherit``, at load time and again by the launch layer when the loader is
bypassed. The hostile corpus names the ways a definition could steer a built-in provider;
each of them was accepted by the suffix-guessing policy this table replaced.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval import envpolicy
from pytest_skill_eval.definitions.loading import load_group
from pytest_skill_eval.errors import DefinitionError, LaunchRefusedError
from pytest_skill_eval.host.install import HostInstallation
from pytest_skill_eval.host.launch import LaunchPlan

from .support import apply_edits, spec_doc, write_json, write_suite_tree

TABLE: dict[str, Any] = json.loads((resources.files("pytest_skill_eval.host") / "env-names.json").read_text(encoding="utf-8"))
CONTROL = "expected a name the evaluator does not control"


def _probe(section: str, key: str) -> str:
    """A concrete name the entry covers: the name itself, or one member of the family."""
    return {"names": key, "prefixes": f"{key}PROBE", "suffixes": f"PROBE{key}"}[section]


def _entries(*classes: str) -> list[tuple[str, str, str]]:
    return [
        (section, key, _probe(section, key))
        for section in ("names", "prefixes", "suffixes")
        for key, entry in TABLE[section].items()
        if entry["class"] in classes and _probe(section, key).isidentifier()
    ]


def _launch_control_family_covers(name: str) -> bool:
    upper = name.upper()
    return any(
        entry["class"] == "launch-control" and (upper.startswith(key) if section == "prefixes" else upper.endswith(key))
        for section in ("prefixes", "suffixes")
        for key, entry in TABLE[section].items()
    ) or TABLE["names"].get(upper, {}).get("class") == "launch-control"


def _load(tmp_path: Path, literal: dict[str, str], inherit: list[str]) -> dict[str, str]:
    """Load a runtime group with this environment; {pointer: message} of every problem."""
    write_suite_tree(tmp_path)
    doc = apply_edits(spec_doc("runtime"), {"/runtime/environment": {"literal": literal, "inherit": inherit}})
    path = write_json(tmp_path / "group.json", doc)
    try:
        load_group(path, tmp_path)
    except DefinitionError as error:
        return {problem.pointer: problem.message for problem in error.problems}
    return {}


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _plan(**changes: Any) -> LaunchPlan:
    host = HostInstallation(node=Path("/nonexistent/node"), cli=Path("/nonexistent/cli.js"), version="1.6.0", managed=True)
    tmp = Path("/nonexistent")
    return LaunchPlan(host=host, mode="json", workspace=tmp / "ws", agent_dir=tmp / "agent", home=tmp / "home",
                      skills=(), extensions=(), tools=("read",), provider="p", model="m", thinking=None, session_dir=None,
                      prompts=("hello",), **changes)  # fmt: skip


def test_the_table_is_reviewed_and_non_trivial() -> None:
    """Every entry has a class and a reason; the families the issue names are in it."""
    for section in ("names", "prefixes", "suffixes"):
        for key, entry in TABLE[section].items():
            assert entry["class"] in ("launch-control", "reserved", "safe"), (section, key)
            assert entry["reason"], (section, key)
            assert entry.get("found") or entry.get("readers"), (section, key)
    assert TABLE["prefixes"]["AWS_ENDPOINT_URL_"]["class"] == "launch-control"
    assert TABLE["suffixes"]["_PROXY"]["class"] == "launch-control"
    safe = sorted(key for key, entry in TABLE["names"].items() if entry["class"] == "safe")
    assert safe == ["COLORTERM", "COLUMNS", "FORCE_COLOR", "LINES", "NO_COLOR", "TERM"]


def test_every_reserved_entry_is_refused_in_literal_with_a_located_error(tmp_path: Path) -> None:
    entries = _entries("launch-control", "reserved")
    assert len(entries) > 250
    problems = _load(tmp_path, {probe: "x" for _, _, probe in entries}, [])
    for section, key, probe in entries:
        message = problems.get(f"/runtime/environment/literal/{_escape(probe)}", "")
        assert message.startswith(f'{CONTROL}, found "{probe}" ('), (section, key, message)
        assert TABLE[section][key]["reason"] in message or _launch_control_family_covers(probe), (section, key, message)


def test_every_launch_control_entry_is_refused_in_inherit(tmp_path: Path) -> None:
    entries = _entries("launch-control")
    problems = _load(tmp_path, {}, [probe for _, _, probe in entries])
    for index, (section, key, probe) in enumerate(entries):
        message = problems.get(f"/runtime/environment/inherit/{index}", "")
        assert message.startswith(f'{CONTROL}, found "{probe}" (') and "launch-control" in message, (section, key, message)


def test_reserved_entries_may_be_inherited_and_safe_ones_set(tmp_path: Path) -> None:
    """A user's own key, region or project passes through inherit; terminal names are free."""
    reserved = [probe for _, _, probe in _entries("reserved") if not _launch_control_family_covers(probe)]
    assert {"AWS_REGION", "ANTHROPIC_API_KEY", "GOOGLE_CLOUD_PROJECT", "AWS_BEARER_TOKEN_PROBE"} <= set(reserved)
    safe = {probe: "x" for _, _, probe in _entries("safe")}
    assert _load(tmp_path, safe, reserved) == {}


def test_the_launch_layer_refuses_every_entry_when_the_loader_is_bypassed() -> None:
    for section, key, probe in _entries("launch-control", "reserved"):
        with pytest.raises(LaunchRefusedError, match="reserved"):
            _plan(literal_env=((probe, "x"),))
        if TABLE[section][key]["class"] == "launch-control":
            with pytest.raises(LaunchRefusedError, match="reserved"):
                _plan(inherited_env={probe: "x"})
    _plan(literal_env=(("TERM", "xterm"),), inherited_env={"AWS_REGION": "us-east-1"})  # allowed


#: Each steers a built-in provider or what the host trusts or loads; each was accepted by
#: the suffix-guessing policy (literal and inherit) before the table replaced it.
HOSTILE = {
    # AWS: per-service endpoint, profile and config files, auth and transport switches, metadata
    "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": "AWS_ENDPOINT_URL_*", "AWS_PROFILE": "AWS_PROFILE",
    "AWS_SHARED_CREDENTIALS_FILE": "AWS_SHARED_CREDENTIALS_FILE", "AWS_WEB_IDENTITY_TOKEN_FILE": "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_BEDROCK_SKIP_AUTH": "AWS_BEDROCK_SKIP_AUTH", "AWS_BEDROCK_FORCE_HTTP1": "AWS_BEDROCK_FORCE_HTTP1",
    "AWS_AUTH_SCHEME_PREFERENCE": "AWS_AUTH_SCHEME_PREFERENCE", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    # Google: credential file, executable-sourced credentials, client certificate config
    "GOOGLE_APPLICATION_CREDENTIALS": "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES": "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES",
    "GOOGLE_API_CERTIFICATE_CONFIG": "GOOGLE_API_CERTIFICATE_CONFIG",
    # Azure, Anthropic, OpenAI: resource host, profile, injected headers, request logging
    "AZURE_OPENAI_RESOURCE_NAME": "AZURE_OPENAI_RESOURCE_NAME", "ANTHROPIC_PROFILE": "ANTHROPIC_PROFILE",
    # Cloudflare: whose AI Gateway receives the requests and the user's key
    "CLOUDFLARE_ACCOUNT_ID": "CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID": "CLOUDFLARE_GATEWAY_ID",
    "ANTHROPIC_CUSTOM_HEADERS": "ANTHROPIC_CUSTOM_HEADERS", "OPENAI_CUSTOM_HEADERS": "OPENAI_CUSTOM_HEADERS",
    "ANTHROPIC_LOG": "ANTHROPIC_LOG", "DEBUG": "DEBUG", "HF_HOME": "HF_HOME",
    # node's OpenSSL, the editor pi starts, babel inside the extension loader, pi's glob
    "OPENSSL_CONF": "OPENSSL_CONF", "EDITOR": "EDITOR", "BABEL_ENV": "BABEL_ENV",
    "__MINIMATCH_TESTING_PLATFORM__": "__MINIMATCH_TESTING_PLATFORM__",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_names_are_refused_in_literal_and_inherit(tmp_path: Path, name: str) -> None:
    label = HOSTILE[name]
    literal = _load(tmp_path / "l", {name: "http://127.0.0.1:9"}, [])
    assert list(literal) == [f"/runtime/environment/literal/{name}"]
    assert f"({label} {'names are' if label.endswith('*') else 'is'} reserved (launch-control): " in literal[f"/runtime/environment/literal/{name}"]
    assert list(_load(tmp_path / "i", {}, [name])) == ["/runtime/environment/inherit/0"]
    with pytest.raises(LaunchRefusedError, match=f"{name!r} is reserved"):
        _plan(literal_env=((name, "x"),))
    with pytest.raises(LaunchRefusedError, match=f"{name!r} is reserved"):
        _plan(inherited_env={name: "x"})


@pytest.mark.parametrize("name", ["no_proxy", "NO_PROXY", "ALL_PROXY", "Https_Proxy", "NODE_EXTRA_CA_CERTS",
                                  "NODE_TLS_REJECT_UNAUTHORIZED", "NODE_OPTIONS", "SSL_CERT_FILE", "PI_PROVIDER",
                                  "AWS_ENDPOINT_URL", "GCE_METADATA_HOST", "CLOUDSDK_CONFIG"])
def test_proxy_trust_and_provider_switches_stay_refused(tmp_path: Path, name: str) -> None:
    assert list(_load(tmp_path / "l", {name: "x"}, [])) == [f"/runtime/environment/literal/{name}"]
    assert list(_load(tmp_path / "i", {}, [name])) == ["/runtime/environment/inherit/0"]


def test_a_users_own_account_settings_are_literal_refused_but_inheritable(tmp_path: Path) -> None:
    problems = _load(tmp_path, {"AWS_REGION": "us-east-1"}, [])
    assert problems == {"/runtime/environment/literal/AWS_REGION": (
        f'{CONTROL}, found "AWS_REGION" (AWS_REGION is reserved for the user\'s own value: selects the user\'s own account, '
        'region, project, API version or deployment for a provider; pass it with "inherit" instead)')}
    assert _load(tmp_path / "i", {}, ["AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]) == {}


def test_names_the_host_does_not_read_are_free_for_extensions(tmp_path: Path) -> None:
    """The old suffix guesses refused these; the host reads none of them."""
    names = {"PROBE_BASE_URL": "x", "MY_TOOL_ENDPOINT": "y", "PROBE_CONFIG_FILE": "z", "PROBE_MODE": "w"}
    assert all(envpolicy.rule_for(name) is None for name in names)
    assert _load(tmp_path, names, []) == {}
