"""Which roots a variant's pi process gets, with which rights: the pure policy (issue 27).

No kernel here: host/confinement.py derives the policy from the variant's paths (what
engine/confine.py decides with it, for a given Landlock ABI, is in tests/engine/test_confine.py).
"""

from __future__ import annotations

import pytest

from pytest_skill_eval.host import landlock as ll
from pytest_skill_eval.host.confinement import (
    RIGHTS,
    Endpoint,
    VariantRoots,
    derive,
    missing,
    model_endpoints,
    parse_host_port,
    shown,
)

ROOTS = VariantRoots(
    workspace="/s/run/baseline/workspace", skills=("/s/run/baseline/resources/skills/0/target",),
    contexts=("/s/run/baseline/resources/context/0/AGENTS.md",), bundles="/s/run/baseline/extensions",
    agent_dir="/s/run/baseline/agent", host_extensions="/s/run/baseline/host-extensions",
    temp="/s/run/baseline/home/tmp", session="/s/run/baseline/session", host_install=("/cache/pi",),
    logs=("/s/run/baseline/host-extensions/active-tools.jsonl",), compile_cache="/cache/cc",
)
MODEL = Endpoint("model", "127.0.0.1", 4711)


def _by_role(roots: VariantRoots = ROOTS, **kw: object) -> dict[str, set[tuple[str, str]]]:
    out: dict[str, set[tuple[str, str]]] = {}
    for g in derive(roots, MODEL, **kw).grants:  # type: ignore[arg-type]
        out.setdefault(g.role, set()).add((g.path, g.access))
    return out


def test_writes_land_only_in_the_workspace_and_the_variants_own_scratch() -> None:
    writable = {g.path for g in derive(ROOTS, MODEL).grants if g.access in ("write", "append")}
    assert writable == {"/s/run/baseline/workspace", "/s/run/baseline/home/tmp", "/s/run/baseline/session",
                        "/s/run/baseline/host-extensions/active-tools.jsonl"}
    # pi's own lock directories beside settings.json and auth.json, and nothing else
    assert _by_role()["agent-dir"] == {("/s/run/baseline/agent", "read-lock")}
    assert RIGHTS["read-lock"] & (ll.WRITE_FILE | ll.MAKE_REG | ll.TRUNCATE | ll.REMOVE_FILE) == 0


def test_declared_resources_are_read_only_and_each_is_named_by_role() -> None:
    roles = _by_role()
    assert roles["skill"] == {("/s/run/baseline/resources/skills/0/target", "read")}
    assert roles["context"] == {("/s/run/baseline/resources/context/0/AGENTS.md", "read")}
    assert roles["bundles"] == {("/s/run/baseline/extensions", "read")}
    assert roles["host"] == {("/cache/pi", "read-exec")}
    assert roles["compile-cache"] == {("/cache/cc", "read")}, "a confined run never writes code others load"


def test_nothing_of_home_tmp_proc_or_the_definition_root_is_granted() -> None:
    paths = [g.path for g in derive(ROOTS, MODEL).grants]
    for forbidden in ("/", "/root", "/home", "/tmp", "/proc", "/sys", "/etc", "/etc/passwd", "/etc/shadow", "/s", "/s/run"):
        assert forbidden not in paths
    assert not [p for p in paths if p.startswith(("/root/", "/home/", "/proc/", "/sys/", "/tmp/"))]


def test_no_session_no_bundles_no_context_means_no_such_root() -> None:
    bare = VariantRoots("/w", (), (), None, "/a", "/h", "/t", None, ("/pi",))
    roles = _by_role(bare)
    assert "session" not in roles and "bundles" not in roles and "skill" not in roles and "context" not in roles


def test_more_access_comes_only_from_the_user_settings() -> None:
    roles = _by_role(allow_read=("/data/ref",), allow_net=(("api.example.com", 8443),))
    assert roles["user-allow-read"] == {("/data/ref", "read")}
    policy = derive(ROOTS, MODEL, allow_net=(("api.example.com", 8443),))
    assert [(e.role, e.port) for e in policy.endpoints] == [("model", 4711), ("user-allow-net", 8443)]
    assert policy.rules(7)["connect"] == [4711, 8443]


@pytest.mark.parametrize(("abi", "net", "scoped", "fs"), [
    (1, 0, 0, (1 << 13) - 1), (3, 0, 0, (1 << 15) - 1), (4, 3, 0, (1 << 15) - 1),
    (6, 3, 3, (1 << 16) - 1), (7, 3, 3, (1 << 16) - 1),
])
def test_rules_ask_the_kernel_only_for_what_its_abi_knows(abi: int, net: int, scoped: int, fs: int) -> None:
    rules = derive(ROOTS, MODEL).rules(abi)
    assert (rules["handled_net"], rules["scoped"], rules["handled_fs"]) == (net, scoped, fs)
    assert all(rights & ~fs == 0 for rights, _, _ in rules["paths"])
    assert rules["connect"] == ([4711] if abi >= 4 else [])


def test_write_access_never_includes_device_nodes_or_ioctls() -> None:
    assert RIGHTS["write"] & (ll.MAKE_CHAR | ll.MAKE_BLOCK | ll.IOCTL_DEV) == 0
    assert RIGHTS["read"] & (ll.WRITE_FILE | ll.EXECUTE) == 0
    assert RIGHTS["append"] == ll.WRITE_FILE


LOCAL = {"local": {"baseUrl": "http://127.0.0.1:4711/v1"}, "other": {"baseUrl": "https://llm.internal:8443"}}


@pytest.mark.parametrize(("provider", "providers", "expected"), [
    ("scripted", {"scripted": {"baseUrl": "http://127.0.0.1:4711/v1"}}, [("127.0.0.1", 4711)]),
    ("custom", {"custom": {"baseUrl": "https://llm.internal/v1"}}, [("llm.internal", 443)]),
    ("custom", {"custom": {"baseUrl": "http://llm.internal/v1"}}, [("llm.internal", 80)]),
    ("custom", {"custom": {"baseUrl": "http://llm.internal:99999/v1"}}, [("llm.internal", 80)]),
    ("anthropic", {}, [("anthropic provider", 443)]),
    ("anthropic", LOCAL, [("anthropic provider", 443)]),
    # no model named: pi picks among every provider it has, so every configured one is open
    (None, {}, [("pi's built-in providers", 443)]),
    (None, LOCAL, [("127.0.0.1", 4711), ("llm.internal", 8443), ("pi's built-in providers", 443)]),
])
def test_the_model_endpoint_comes_from_the_provider(provider: str | None, providers: dict[str, object],
                                                    expected: list[tuple[str, int]]) -> None:
    assert [(e.host, e.port) for e in model_endpoints(provider, providers)] == expected


@pytest.mark.parametrize("text", ["example.com", "example.com:", ":443", "h:0", "h:65536", "h:https", "h:-1"])
def test_a_bad_allow_net_value_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_host_port(text)


def test_allow_net_accepts_host_port_and_bracketed_v6() -> None:
    assert parse_host_port("api.example.com:8443") == ("api.example.com", 8443)
    assert parse_host_port("[::1]:8080") == ("::1", 8080)


def test_recorded_paths_name_their_role_not_the_scratch_location() -> None:
    names = {"/s/run/baseline": "<variant-scratch>", "/s/run": "<group-scratch>"}
    assert shown("/s/run/baseline/workspace", names) == "<variant-scratch>/workspace"
    assert shown("/s/run/bundles", names) == "<group-scratch>/bundles"
    assert shown("/s/run/baseline", names) == "<variant-scratch>"
    assert shown("/s/runner/x", names) == "/s/runner/x"
    assert shown("/usr", names) == "/usr"


def test_missing_names_what_the_kernel_lacks() -> None:
    assert missing(7) == [] and missing(6) == []
    assert [m.split(" ")[0] for m in missing(5)] == ["signal"]
    assert [m.split(" ")[0] for m in missing(3)] == ["network", "signal"]
    assert [m.split(" ")[0] for m in missing(0)] == ["filesystem", "network"]


def test_the_rules_survive_their_line_format() -> None:
    rules = {"handled_fs": 7, "handled_net": 3, "scoped": 3, "connect": [443, 8080],
             "paths": [[5, "/a dir/with  spaces", False], [4, "/usr", True]]}
    assert ll.parse_rules(ll.render_rules(rules)) == rules
    with pytest.raises(ValueError, match="line breaks"):
        ll.render_rules({**rules, "paths": [[4, "/a\nb", False]]})
