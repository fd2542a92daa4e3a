"""Which environment names a definition may set or inherit: the one reserved-name policy.

Pure: the definitions loader reports a reserved name as a located error, and the launch
layer drops any reserved name a caller passes anyway (defence in depth), so a definition
object built without the loader still cannot steer the evaluator, pi, node, the dynamic
loader or a language runtime. Names compare case-insensitively.

Families are preferred to single names: a new ``NODE_*`` or ``PI_*`` setting in a later
release is reserved before anyone has heard of it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RESERVED_FAMILIES", "ReservedFamily", "reserved_family", "reserved_reason"]


@dataclass(frozen=True, slots=True)
class ReservedFamily:
    """A set of names (exact names, prefixes or suffixes) and why the evaluator owns them."""

    label: str
    why: str
    names: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()

    def matches(self, upper: str) -> bool:
        return upper in self.names or upper.startswith(self.prefixes) or upper.endswith(self.suffixes)


RESERVED_FAMILIES: tuple[ReservedFamily, ...] = (
    ReservedFamily(
        "SKILL_EVAL_*",
        "the evaluator's own settings and the configuration of its guard and observer",
        prefixes=("SKILL_EVAL_",),
    ),
    ReservedFamily(
        "PI_*",
        "pi's loading, paths, agent dir, offline mode and telemetry",
        prefixes=("PI_",),
    ),
    ReservedFamily(
        "NODE_*, NPM_CONFIG_*, UV_*, UNDICI_*, JITI_*, COREPACK_*",
        "node's runtime, module loading and fetch, and the loader pi uses for extensions",
        prefixes=("NODE_", "NPM_CONFIG_", "UV_", "UNDICI_", "JITI_", "COREPACK_", "TS_NODE_"),
    ),
    ReservedFamily(
        "LD_*, DYLD_*, GLIBC_TUNABLES",
        "the dynamic loader",
        names=frozenset({"GLIBC_TUNABLES"}),
        prefixes=("LD_", "DYLD_"),
    ),
    ReservedFamily(
        "PYTHON*, PERL*, RUBY*, GEM_*, LUA_*, JAVA_TOOL_OPTIONS, CLASSPATH, shell start-up files",
        "a language runtime's or shell's module loading and start-up code",
        names=frozenset({"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH", "BASH_ENV", "ENV",
                         "SHELL", "SHELLOPTS", "BASHOPTS", "PS4", "IFS", "CDPATH", "ZDOTDIR"}),
        prefixes=("PYTHON", "PERL", "RUBY", "GEM_", "BUNDLE_", "LUA_", "BASH_FUNC_"),
    ),
    ReservedFamily(
        "PATH, HOME, TMPDIR, LANG, LC_*, XDG_*",
        "the host-runtime baseline the evaluator supplies itself (private HOME and temp dir, fixed locale)",
        names=frozenset({"PATH", "HOME", "USERPROFILE", "TMPDIR", "TMP", "TEMP", "LANG", "LANGUAGE", "TZDIR"}),
        prefixes=("LC_", "XDG_"),
    ),
    ReservedFamily(
        "*_PROXY, *_BASE_URL, *_ENDPOINT*, TLS trust stores, cloud metadata hosts",
        "where providers' requests go and which servers they trust",
        names=frozenset({"SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GCE_METADATA_HOST",
                         "GCE_METADATA_IP", "METADATA_SERVER_DETECTION", "KIMI_OAUTH_HOST", "KIMI_CODE_OAUTH_HOST"}),
        suffixes=("_PROXY", "_BASE_URL", "_ENDPOINT", "_ENDPOINT_URL", "_ENDPOINT_MODE", "_API_BASE"),
    ),
    ReservedFamily(
        "*_CONFIG_DIR, *_CONFIG_FILE, CLOUDSDK_CONFIG",
        "where pi's provider SDKs load configuration from",
        names=frozenset({"CLOUDSDK_CONFIG"}),
        suffixes=("_CONFIG_DIR", "_CONFIG_FILE"),
    ),
)


def reserved_family(name: str) -> ReservedFamily | None:
    """The family that reserves *name*, or ``None`` when a definition may use it."""
    upper = name.upper()
    return next((family for family in RESERVED_FAMILIES if family.matches(upper)), None)


def reserved_reason(name: str) -> str | None:
    """Why *name* is reserved, worded for a located definition error; ``None`` if it is not."""
    family = reserved_family(name)
    if family is None:
        return None
    return f"{family.label} are reserved: {family.why}"
