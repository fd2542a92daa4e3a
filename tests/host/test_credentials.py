"""Where a provider's credential comes from, and pi's missing-credential advice rewritten.

The texts are pi 1.6.0's own (``core/auth-guidance.js``, ``core/agent-session.js``); the
real-host tests in ``tests/plugin/test_host_default_model.py`` see them in both modes.
"""

from __future__ import annotations

import json
from pathlib import Path

from pytest_skill_eval.credentials import (
    credential_for,
    credentialed_providers,
    explain_host_failure,
)

LOGIN_HELP = ("Use /login to log into a provider via OAuth or API key. See:\n"
              "  /pi/docs/providers.md\n  /pi/docs/models.md")


def test_rpc_rejection_keeps_pis_first_line_and_names_the_fix() -> None:
    reason = f"turn 1: prompt rejected by the host: No API key found for openai.\n\n{LOGIN_HELP}"
    text = explain_host_failure(reason, "")
    assert text is not None
    assert text.startswith("turn 1: prompt rejected by the host: No API key found for openai. ")
    assert "OPENAI_API_KEY" in text and "runtime.environment.inherit" in text and "--skill-eval-auth" in text
    assert "/login" not in text and "\n" not in text


def test_json_mode_message_comes_from_stderr() -> None:
    text = explain_host_failure("the host exited before the turn settled", f"No API key found for anthropic.\n\n{LOGIN_HELP}\n")
    assert text is not None
    assert text.startswith("the host exited before the turn settled: No API key found for anthropic. ")
    assert "ANTHROPIC_API_KEY" in text and "/login" not in text


def test_no_models_available() -> None:
    stderr = f"Warning: No models available. {LOGIN_HELP}\nNo API key found for the selected model.\n\n{LOGIN_HELP}\n"
    text = explain_host_failure("the host exited before the turn settled", stderr)
    assert text is not None and "No models available" in text and "/login" not in text
    assert "runtime.environment.inherit" in text and "--skill-eval-auth" in text


def test_expired_oauth_login() -> None:
    reason = ('turn 1: prompt rejected by the host: Authentication failed for "anthropic". Credentials may have '
              "expired or network is unavailable. Run '/login anthropic' to re-authenticate.")
    text = explain_host_failure(reason, "")
    assert text is not None and "/login" not in text and "--skill-eval-auth" in text


def test_other_failures_are_unchanged() -> None:
    assert explain_host_failure("turn 1: model provider error: 500", "") == "turn 1: model provider error: 500"
    assert explain_host_failure(None, "No API key found for openai.") is None


def _found(provider: str, inherit: list[str], env: dict[str, str], auth_file: Path | None = None) -> str | None:
    """Where a known provider's credential comes from (the provider must be known)."""
    credential = credential_for(provider, inherit, env, auth_file=auth_file)
    assert credential is not None, f"{provider} is a known provider"
    return credential.found


def test_credential_sources(tmp_path: Path) -> None:
    assert _found("openai", [], {"OPENAI_API_KEY": "x" * 20}) is None  # set but not inherited
    assert _found("openai", ["OPENAI_API_KEY"], {"OPENAI_API_KEY": "x" * 20}) == "inherited OPENAI_API_KEY"
    auth = tmp_path / "auth.json"
    auth.write_text(json.dumps({"openai": {"type": "api_key", "key": "k" * 20}}))
    assert _found("openai", [], {}, auth_file=auth) == "--skill-eval-auth"
    assert credential_for("unknown-provider", [], {}) is None
    found = credentialed_providers(["GEMINI_API_KEY"], {"GEMINI_API_KEY": "g" * 20}, auth_file=auth)
    assert [c.provider for c in found] == ["google", "openai"]
