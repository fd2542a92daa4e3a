"""tools/scan_host_env.py: what counts as an environment read, and the CI guard on the pin.

The parsing tests use small JavaScript samples in the shapes the pinned bundle uses
(minified and not); the ``pi`` tests scan the installed host itself.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_skill_eval.host.install import HostInstallation

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import envscan  # noqa: E402
import scan_host_env  # noqa: E402


def reads(text: str, **kwargs: Any) -> set[tuple[str, str]]:
    return {(read.kind, read.value) for read, _ in envscan.scan_source(text, **kwargs)}


@pytest.mark.parametrize(("source", "expected"), [
    ("process.env.NODE_OPTIONS; process.env?.PI_OFFLINE", {("name", "NODE_OPTIONS"), ("name", "PI_OFFLINE")}),
    ("process.env['HTTPS_PROXY'] || process.env[\"no_proxy\"]", {("name", "HTTPS_PROXY"), ("name", "no_proxy")}),
    ("globalThis.process.env?.['ANTHROPIC_BASE_URL']", {("name", "ANTHROPIC_BASE_URL")}),
    ("const { AWS_REGION, AWS_PROFILE: profile } = process.env;", {("name", "AWS_REGION"), ("name", "AWS_PROFILE")}),
    ("const {env} = process; if ('TF_BUILD' in env) x = env.COLORTERM", {("name", "TF_BUILD"), ("name", "COLORTERM")}),
    ("import { env } from 'node:process'; env.GOOGLE_CLOUD_PROJECT", {("name", "GOOGLE_CLOUD_PROJECT")}),
    ("let zt=globalThis.process?.env||Object.create(null);let e=zt.AI_AGENT", {("name", "AI_AGENT")}),
    ("const ENV_PROFILE = 'AWS_PROFILE';\nconst p = init.profile ?? process.env[ENV_PROFILE];", {("name", "AWS_PROFILE")}),
    ("exports.CERT = 'GOOGLE_API_CERTIFICATE_CONFIG'; const p = process.env[exports.CERT];", {("name", "GOOGLE_API_CERTIFICATE_CONFIG")}),
    # a reader function: its calls are the reads, its own body is not an unresolved site
    ("const readEnv = (env) => globalThis.process.env?.[env]?.trim(); readEnv('OPENAI_BASE_URL');", {("name", "OPENAI_BASE_URL")}),
    # a reader of a reader, through the upper-case form of its parameter
    ("function getEnvValue(name){return process.env[name]}"
     "function getProxyEnv(key){let up=key.toUpperCase();return getEnvValue(up)}"
     "getProxyEnv(`${protocol}_proxy`)||getProxyEnv('all_proxy')", {("suffix", "_proxy"), ("name", "all_proxy")}),
    # the AWS SDK's per-service endpoint: a config selector joining a constant and the service id
    ('const ENV_ENDPOINT_URL = "AWS_ENDPOINT_URL";\n'
     "x = {environmentVariableSelector: (env) => { const parts = serviceId.split(' ').map((w) => w.toUpperCase());"
     ' const v = env[[ENV_ENDPOINT_URL, ...parts].join("_")]; return v || env[ENV_ENDPOINT_URL]; }, configFileSelector: 1}',
     {("prefix", "AWS_ENDPOINT_URL_"), ("name", "AWS_ENDPOINT_URL")}),
    ("NODE_OPTS={environmentVariableSelector:env3=>booleanSelector(env3,ENV_USE_FIPS,SelectorType.ENV),configFileSelector:p=>1};"
     'ENV_USE_FIPS="AWS_USE_FIPS_ENDPOINT"', {("name", "AWS_USE_FIPS_ENDPOINT")}),
    # names built by a function that returns a template
    ("getKey=signingName=>`AWS_BEARER_TOKEN_${signingName.toUpperCase()}`;let k=getKey(n);if(!(k in process.env))throw 1",
     {("prefix", "AWS_BEARER_TOKEN_")}),
    ('var APP_NAME="pi",ENV_DIR=`${APP_NAME.toUpperCase()}_CODING_AGENT_DIR`;process.env[ENV_DIR]', {("name", "PI_CODING_AGENT_DIR")}),
    # a getter that returns the environment, a reader method, and a loop over constant names
    ("function getProcessEnv(){return globalThis.process?.env}"
     "function ctx(){return{async env(name){return getProcessEnv()?.[name]}}}"
     "async function f(c){for(let v of [KEY_ENV,'CLOUDFLARE_ACCOUNT_ID']){await c.env(v)}}var KEY_ENV='ANTHROPIC_API_KEY'",
     {("name", "ANTHROPIC_API_KEY"), ("name", "CLOUDFLARE_ACCOUNT_ID")}),
    # whole-environment scans become families
    ("Object.keys(process.env).filter(name=>name.startsWith('PI_')).sort()", {("prefix", "PI_")}),
    ("Object.keys(process.env).filter(k=>/^debug_/i.test(k)).reduce((o,key)=>{o[key]=process.env[key];return o},{})",
     {("prefix", "DEBUG_")}),
    ("for(let[key,v]of Object.entries(process.env))key.startsWith('ANTHROPIC_')||(env[key]=v)", {("prefix", "ANTHROPIC_")}),
    ("const pathKey=Object.keys(process.env).find(k=>k.toLowerCase()==='path')??'PATH';process.env[pathKey]", {("name", "PATH")}),
    ("const {env}=process;if(['TRAVIS','CIRCLECI'].some(sign=>sign in env))return 1", {("name", "TRAVIS"), ("name", "CIRCLECI")}),
    # prose in a message is not a read; neither is an emptiness test
    ("const {env}=process; throw new Error(`${NAME} not set in env, checking config`)", set()),
    ("if(Object.keys(process.env).length>0)return process.env", set()),
])
def test_each_form_of_read_is_found(source: str, expected: set[tuple[str, str]]) -> None:
    assert reads(source) == expected


def test_a_short_minified_alias_is_followed_until_it_is_bound_again() -> None:
    """``zt`` stays the environment across the module; ``o`` stops being it at ``function(e,o)``."""
    filler = ";x=1" * 1000
    assert reads(f"let zt=globalThis.process?.env||{{}}{filler};zt.TEST;zt.MODE") == {("name", "TEST"), ("name", "MODE")}
    source = f"o=process.env;o.HOME{filler};function f(e,o){{return o.ERR_INVALID_ARG_TYPE}}"
    assert reads(source) == {("name", "HOME")}


def test_the_environment_handed_to_a_function_is_a_site_to_review() -> None:
    """What the receiver reads is not visible here, so the hand-over itself is reported."""
    for source in ("let c=envVarSelector(process.env,options)", "function f(x){if(x)return process.env;return {}}"):
        assert [read.kind for read, _ in envscan.scan_source(source)] == ["unresolved"]


def test_a_key_the_parser_cannot_work_out_is_reported_not_dropped() -> None:
    found = envscan.scan_source("let apiKeyEnv = table[provider]; return process.env[apiKeyEnv];")
    assert [read.kind for read, _ in found] == ["unresolved"]
    scan = scan_host_env.scan_texts([("probe: index.js", "let apiKeyEnv = table[provider]; return process.env[apiKeyEnv];")])
    [site] = scan["constructions"]
    assert site.startswith("probe: ") and site.endswith("return process.env[apiKeyEnv];")


def test_constants_and_readers_from_other_files_resolve() -> None:
    scan = scan_host_env.scan_texts([
        ("@aws-sdk/x: constants.js", 'export const ENV_CONFIG_PATH = "AWS_CONFIG_FILE";'),
        ("@aws-sdk/x: env.js", "export const readEnv = (env) => process.env[env];"),
        ("@aws-sdk/x: use.js", "import {ENV_CONFIG_PATH} from './constants'; const f = () => process.env[ENV_CONFIG_PATH2];"
                               " (0, env_1.readEnv)('AWS_SDK_UA_APP_ID')"),
    ])
    assert set(scan["names"]) == {"AWS_CONFIG_FILE", "AWS_SDK_UA_APP_ID"}
    assert scan["names"]["AWS_CONFIG_FILE"] == {"@aws-sdk/x: use.js"}


def _table(**sections: dict[str, Any]) -> dict[str, Any]:
    return {"names": {}, "prefixes": {}, "suffixes": {}, "constructions": {}, **sections}


def _scan(**sections: dict[str, set[str]]) -> scan_host_env.Scan:
    return {"names": {}, "prefixes": {}, "suffixes": {}, "constructions": {}, **sections}


def test_check_fails_on_a_new_name_an_unreviewed_entry_and_a_stale_one() -> None:
    reviewed = {"class": "launch-control", "reason": "where requests go", "found": ["a: b.js"]}
    table = _table(names={"OLD_NAME": reviewed, "NEW_TODO": {"class": "unreviewed", "reason": "", "found": ["a: b.js"]},
                          "LD_X": {"class": "launch-control", "reason": "loader", "readers": "ld.so"}})
    scan = _scan(names={"NEW_TODO": {"a: b.js"}, "AWS_ENDPOINT_URL_S3": {"@aws-sdk/x: y.js"}})
    problems = scan_host_env.problems(scan, table)
    assert problems == [
        "names: the host reads 'AWS_ENDPOINT_URL_S3' (found in @aws-sdk/x: y.js), which the table does not list",
        "names: 'NEW_TODO' has class 'unreviewed'; expected one of launch-control, reserved, safe",
        "names: 'NEW_TODO' has no reviewed reason",
        "names: 'OLD_NAME' is no longer read by the host (listed as found in ['a: b.js'])",
    ]
    assert scan_host_env.problems(_scan(names={"OLD_NAME": {"a: b.js"}}), _table(names={"OLD_NAME": reviewed})) == []


def test_write_keeps_reviews_adds_unreviewed_entries_and_drops_stale_ones() -> None:
    table = _table(names={"KEPT": {"class": "reserved", "reason": "r", "found": ["old: a.js"]},
                          "GONE": {"class": "reserved", "reason": "r", "found": ["old: a.js"]},
                          "LD_X": {"class": "launch-control", "reason": "loader", "readers": "ld.so"}})
    merged = scan_host_env.merged(_scan(names={"KEPT": {"new: b.js"}, "ADDED": {"new: c.js"}}), table)
    assert merged["names"] == {
        "ADDED": {"class": "unreviewed", "reason": "", "found": ["new: c.js"]},
        "KEPT": {"class": "reserved", "reason": "r", "found": ["new: b.js"]},
        "LD_X": {"class": "launch-control", "reason": "loader", "readers": "ld.so"},
    }
    assert "unreviewed" not in {entry["class"] for entry in json.loads(scan_host_env.TABLE.read_text())["names"].values()}


def _node_modules(host: HostInstallation) -> Path:
    return next(parent for parent in host.cli.parents if parent.name == "node_modules")


@pytest.mark.pi
def test_the_table_describes_every_environment_read_of_the_pinned_host(pi_host: HostInstallation) -> None:
    """The CI guard: a pi upgrade that reads a new name fails here until the table is reviewed."""
    scan = scan_host_env.scan_host(_node_modules(pi_host))
    problems = scan_host_env.problems(scan, json.loads(scan_host_env.TABLE.read_text(encoding="utf-8")))
    assert not problems, "\n".join([*problems, scan_host_env.HOW_TO_REVIEW])
    # the families the issue is about are found by the scan itself, not only reviewed in
    assert {"AWS_ENDPOINT_URL_", "AWS_BEARER_TOKEN_", "PI_"} <= set(scan["prefixes"])
    assert "_PROXY" in scan["suffixes"]
    assert {"AWS_PROFILE", "AWS_CONFIG_FILE", "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_OPENAI_BASE_URL",
            "NODE_EXTRA_CA_CERTS", "NODE_TLS_REJECT_UNAUTHORIZED", "AWS_BEDROCK_SKIP_AUTH"} <= set(scan["names"])
