"""Whether a provider will get a credential in a variant's private agent dir, and pi's advice.

pi reads a provider's key from, in order, ``auth.json`` in its agent dir, the provider's
``apiKey`` in ``models.json``, and the provider's environment variables. Here the agent
dir is private and the environment is built from scratch, so a key reaches pi only
through ``--skill-eval-auth`` (copied to ``auth.json``), ``--skill-eval-models`` (an
``apiKey`` literal or a ``$NAME`` that is inherited) or a variable the group's
``runtime.environment.inherit`` names. Nothing here reads or returns a secret's value.

pi's own messages for a missing credential end in advice that does not work here
(``/login`` is an interactive command); :func:`explain_host_failure` replaces it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PROVIDER_KEY_VARIABLES", "Credential", "credential_for", "credentialed_providers", "explain_host_failure"]

#: Key variables per provider, as pi 1.6.0 reads them (pi-ai ``env-api-keys.js``).
PROVIDER_KEY_VARIABLES: Mapping[str, tuple[str, ...]] = {
    "github-copilot": ("COPILOT_GITHUB_TOKEN",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"),
    "ant-ling": ("ANT_LING_API_KEY",),
    "qwen-token-plan": ("QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"),
    "qwen-token-plan-cn": ("QWEN_TOKEN_PLAN_TEAM_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"),
    "qwen-token-plan-individual": ("QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"),
    "qwen-token-plan-individual-cn": ("QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
    "azure": ("AZURE_OPENAI_API_KEY",),
    "nvidia": ("NVIDIA_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "google": ("GEMINI_API_KEY",),
    "google-vertex": ("GOOGLE_CLOUD_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "typesafe": ("TYPESAFE_API_KEY",),
    "radius": ("RADIUS_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "vercel-ai-gateway": ("AI_GATEWAY_API_KEY",),
    "zai": ("ZAI_API_KEY",),
    "zai-coding-cn": ("ZAI_CODING_CN_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "minimax": ("MINIMAX_API_KEY",),
    "minimax-cn": ("MINIMAX_CN_API_KEY",),
    "moonshotai": ("MOONSHOT_API_KEY",),
    "moonshotai-cn": ("MOONSHOT_API_KEY",),
    "huggingface": ("HF_TOKEN",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "baseten": ("BASETEN_API_KEY",),
    "opencode": ("OPENCODE_API_KEY",),
    "opencode-go": ("OPENCODE_API_KEY",),
    "kimi-coding": ("KIMI_API_KEY",),
    "meta": ("META_API_KEY",),
    "cloudflare-workers-ai": ("CLOUDFLARE_API_KEY",),
    "cloudflare-ai-gateway": ("CLOUDFLARE_API_KEY",),
    "xiaomi": ("XIAOMI_API_KEY",),
    "xiaomi-token-plan-cn": ("XIAOMI_TOKEN_PLAN_CN_API_KEY",),
    "xiaomi-token-plan-ams": ("XIAOMI_TOKEN_PLAN_AMS_API_KEY",),
    "xiaomi-token-plan-sgp": ("XIAOMI_TOKEN_PLAN_SGP_API_KEY",),
    # credential sets pi accepts besides a key (any one of them)
    "amazon-bedrock": ("AWS_BEARER_TOKEN_BEDROCK", "AWS_PROFILE", "AWS_ACCESS_KEY_ID"),
}


@dataclass(frozen=True, slots=True)
class Credential:
    """How a provider gets its credential (``found``), or how it could (``fix``)."""

    provider: str
    found: str | None
    fix: str


def _read_json(path: Path | None) -> dict[str, object]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _fix(provider: str, variables: Sequence[str]) -> str:
    named = " or ".join(variables)
    via_env = f"add {named} to the group's runtime.environment.inherit (and set it where you run pytest)" if variables else ""
    via_auth = f"pass --skill-eval-auth FILE with a pi auth.json holding a {provider!r} entry"
    return f"{via_env}, or {via_auth}" if via_env else via_auth


def credential_for(provider: str, inherit: Sequence[str], env: Mapping[str, str], *,
                   auth_file: Path | None = None, user_models: Path | None = None) -> Credential | None:
    """Where *provider*'s credential would come from in a run, or None when this cannot tell.

    None means a provider pi knows by neither a key variable nor ``models.json`` (pi
    resolves it at run time, e.g. OAuth-only providers through ``auth.json``).
    """
    variables = PROVIDER_KEY_VARIABLES.get(provider, ())
    if provider in _read_json(auth_file):
        return Credential(provider, "--skill-eval-auth", _fix(provider, variables))
    providers = _read_json(user_models).get("providers")
    custom = providers.get(provider) if isinstance(providers, dict) else None
    if isinstance(custom, dict) and isinstance(custom.get("apiKey"), str):
        key = str(custom["apiKey"])
        match = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", key)
        if match is None:
            return Credential(provider, "the apiKey of --skill-eval-models", _fix(provider, variables))
        variables = (match.group(1),)
    for name in variables:
        if name in inherit and name in env:
            return Credential(provider, f"inherited {name}", _fix(provider, variables))
    if not variables and not isinstance(custom, dict):
        return None
    unset = [name for name in variables if name in inherit and name not in env]
    if unset:
        # declared but unset: the variable to set comes first, the other ways after it
        return Credential(provider, None, f"{unset[0]} is in the group's runtime.environment.inherit but not set "
                                          f"where pytest runs: set it (export {unset[0]}=...), or "
                                          f"{_fix(provider, variables)}")
    return Credential(provider, None, _fix(provider, variables))


def credentialed_providers(inherit: Sequence[str], env: Mapping[str, str], *, auth_file: Path | None = None,
                           user_models: Path | None = None) -> list[Credential]:
    """Every provider pi will find a credential for: what an omitted ``model`` chooses from."""
    names = set(PROVIDER_KEY_VARIABLES) | {str(k) for k in _read_json(auth_file)}
    providers = _read_json(user_models).get("providers")
    if isinstance(providers, dict):
        names |= {str(k) for k in providers}
    found = []
    for name in sorted(names):
        credential = credential_for(name, inherit, env, auth_file=auth_file, user_models=user_models)
        if credential is not None and credential.found is not None:
            found.append(credential)
    return found


_NO_KEY = re.compile(r"No API key found for (?P<provider>[^\s.]+|the selected model)\.")
_NO_MODELS = "No models available."
_LOGIN_ADVICE = re.compile(r"\s*Use /login to log into a provider.*?(?=\n\S|\Z)", re.DOTALL)
_REAUTH = re.compile(r"Run '/login (?P<provider>[^']+)' to re-authenticate\.")


def explain_host_failure(reason: str | None, stderr: str) -> str | None:
    """*reason* with pi's ``/login`` advice replaced by the fix that works in an evaluation.

    pi reports a missing key as ``No API key found for <provider>.`` (on stderr in JSON
    mode, in the rejected prompt in RPC mode) and a run without any usable model as
    ``No models available.``; both continue with "Use /login …", which is interactive.
    """
    if reason is None:
        return None
    text = f"{reason}\n{stderr}"
    match = _NO_KEY.search(text)
    if match is not None and match.group("provider") != "the selected model":
        provider = match.group("provider")
        head = reason.split("\n", 1)[0] if _NO_KEY.search(reason) else f"{reason}: {match.group(0)}"
        return f"{head} Here pi sees only what the evaluator gives it: {_fix(provider, PROVIDER_KEY_VARIABLES.get(provider, ()))}."
    if _NO_MODELS in text or match is not None:
        # "the selected model": pi had no model at all to name the provider of
        head = reason.split("\n", 1)[0] if _NO_MODELS in reason else f"{reason}: pi says {_NO_MODELS}"
        return (f"{head} pi uses only the providers it has a credential for (a group without \"model\" gets pi's "
                "own pick among them), and it was given none: name the model in the group's \"model\" field, and "
                "add the provider's key variable to runtime.environment.inherit or pass --skill-eval-auth FILE.")
    reauth = _REAUTH.search(text)
    if reauth is not None:
        provider = reauth.group("provider")
        return f"{_REAUTH.sub('', reason).rstrip()} Refresh the {provider!r} entry of the --skill-eval-auth file."
    return reason if "/login" not in reason else _LOGIN_ADVICE.sub("", reason)
