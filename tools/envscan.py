"""Find every environment variable a JavaScript file reads: the pure part of scan_host_env.

``scan_source(text)`` returns what one file reads from ``process.env``, named exactly where it
can be, as a prefix or suffix family where the name is built (``AWS_ENDPOINT_URL_`` + service,
`` `${proto}_proxy` ``, ``Object.keys(process.env).filter(k => k.startsWith("PI_"))``), and as
an *unresolved* site (with its text) where the key cannot be worked out, so nothing a file
reads is ever dropped silently: an unresolved site must be reviewed by a person.

What counts as reading the environment:

- ``process.env.X``, ``process.env["X"]``, ``process.env?.[X]``, ``X in process.env``,
  ``{X, Y} = process.env``;
- the same through an alias (``env = process.env``, ``{env} = process``, ``import {env} from
  "node:process"``);
- a *reader function*, one whose parameter is used as a key of ``process.env``
  (``readEnv = (k) => process.env[k]``): every call of it is a read of its first argument
  (``readers`` passes such names found in other files, as bundlers keep them);
- an SDK config loader's ``environmentVariableSelector`` (its parameter is the environment);
- whole-environment scans (``Object.keys(process.env)``, ``for (k in process.env)``),
  narrowed by the ``startsWith``/regular expression that follows them.

A computed key is resolved through string constants (``CONSTANT_CASE`` ones in any file,
see ``string_constants``; other names only just before the read, as minified code reuses
them), ``[CONST, ...].join("_")``, template literals, ``"PRE" + x``, ``a ?? "PATH"``, a list
the key iterates (``["CI", "TRAVIS"].some(k => k in env)``), and functions that return a
template (``getBearerTokenEnvKey``).

Limits: the parser reads text, not a syntax tree. It does not follow the environment
through other shapes (``process["env"]``, an object built from it and passed far away);
such code is only seen where it indexes ``process.env`` itself, and then as an unresolved
site. A whole environment spread into a child process (``{...process.env}``) is not a read
by the host; what the child reads is covered by the reviewed runtime families.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["Read", "reader_functions", "scan_source", "string_constants"]

_ID = r"[A-Za-z_$][\w$]*"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PROCESS_ENV = r"(?:globalThis\.|global\.)?process(?:\?\.|\.)env"


@dataclass(frozen=True, order=True)
class Read:
    """One thing a file reads: ``kind`` is ``name``, ``prefix``, ``suffix`` or ``unresolved``."""

    kind: str
    value: str


def _balanced(text: str, start: int, stops: str) -> tuple[str, int] | None:
    """The text from *start* up to a character of *stops* (or an unmatched closer) at depth 0."""
    i, pairs = start, {"(": ")", "[": "]", "{": "}"}
    stack: list[str] = []
    limit = min(len(text), start + 2000)
    while i < limit:
        c = text[i]
        if c in "\"'`":
            j = i + 1
            while j < limit and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c in pairs:
            stack.append(pairs[c])
        elif stack and c == stack[-1]:
            stack.pop()
        elif not stack and (c in stops or c in ")]}"):
            return text[start:i], i
        i += 1
    return (text[start:limit], limit) if limit == len(text) else None


class _File:
    """One file's text with its constants and functions looked up on demand."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._constants: dict[str, list[str]] = {}

    def assignments(self, ident: str, site: int) -> list[str]:
        """Right-hand sides assigned to *ident*, first 300 chars each.

        A ``CONSTANT_CASE`` name is looked up in the whole file (``X = ...``, ``X: ...``);
        any other name (``key``, ``name``: minified code reuses them everywhere) only as
        ``x = ...`` in the 1500 characters before *site*.
        """
        constant = re.fullmatch(r"[A-Z][A-Z0-9_]*", ident) is not None
        cache_key = ident if constant else f"{ident}@{site}"
        if cache_key not in self._constants:
            if constant:
                pattern = re.compile(rf"(?<![\w$])(?:exports\.)?{re.escape(ident)}\s*(?:=(?![=>])|:(?!:))\s*")
                lo, hi = 0, len(self.text)
            else:
                pattern = re.compile(rf"(?<![\w$.]){re.escape(ident)}\s*=(?![=>])\s*")
                lo, hi = max(0, site - 1500), site
            found = [self.text[m.end() : m.end() + 300] for m in pattern.finditer(self.text, lo, hi)]
            self._constants[cache_key] = found[:9] if constant else found[-3:]
        return self._constants[cache_key]

    def returned_template(self, fn: str) -> list[str]:
        """The templates or strings a function named *fn* returns (arrow or declaration)."""
        out = []
        arrow = re.compile(rf"(?<![\w$.]){re.escape(fn)}\s*=\s*(?:async\s*)?(?:\([^)]*\)|{_ID})\s*=>\s*")
        decl = re.compile(rf"function\s+{re.escape(fn)}\s*\([^)]*\)\s*\{{\s*return\s+")
        for pattern in (arrow, decl):
            for match in pattern.finditer(self.text):
                out.append(self.text[match.end() : match.end() + 300])
        return out


_STRING = re.compile(r"""^(["'])([^"'\s\\]+)\1$""")
_TEMPLATE = re.compile(r"^`([^`$]*)\$\{(?:[^`]*?)\}([^`$]*)`$")
_JOIN = re.compile(r"""^\[\s*([^,\]]+?)\s*,\s*\.\.\.[^\]]*\]\.join\(\s*(["'])([^"']*)\2\s*\)$""")
_CONCAT_HEAD = re.compile(r"""^(["'])([A-Za-z_][A-Za-z0-9_]*)\1\s*\+""")
_CONCAT_TAIL = re.compile(r"""\+\s*(["'])([A-Za-z0-9_]+)\1\s*$""")
_CASE = re.compile(r"\.(?:toUpperCase|toLowerCase|trim)\(\)$")
_CONSTANT = re.compile(r"""(?<![\w$.])(?:exports\.)?([A-Z][A-Z0-9_]{2,})\s*[=:]\s*(["'`])""")
_TEMPLATE_FN = re.compile(rf"(?<![\w$.])({_ID})\s*=\s*(?:\([^)]*\)|{_ID})\s*=>\s*`|function\s+({_ID})\s*\([^)]*\)\s*\{{\s*return\s*`")


def string_constants(text: str) -> dict[str, set[Read]]:
    """What ``CONSTANT_CASE`` names and template-returning functions in *text* stand for.

    The cross-file fallback: a key imported from another module (``ENV_PROFILE``,
    ``getBearerTokenEnvKey(name)``) resolves through the file that defines it.
    """
    ctx = _Context(text, {})
    out: dict[str, set[Read]] = {}
    for m in _CONSTANT.finditer(text):
        ctx.site = m.start()
        value = _leading_expression(text[m.end() - 1 : m.end() + 300])
        resolved = _resolve(value, ctx) if value else None
        if resolved:
            out.setdefault(m.group(1), set()).update(resolved)
    for m in _TEMPLATE_FN.finditer(text):
        ctx.site = m.start()
        value = _leading_expression(text[m.end() - 1 : m.end() + 300])
        resolved = _resolve(value, ctx) if value else None
        if resolved:
            out.setdefault(m.group(1) or m.group(2), set()).update(resolved)
    return out


class _Context:
    """One file, with the constants of every scanned file as the fallback for its imports."""

    def __init__(self, text: str, constants: Mapping[str, Iterable[Read]]) -> None:
        self.file = _File(text)
        self.constants = constants
        #: where the read being resolved is (non-constant names resolve only just before it)
        self.site = len(text)


def _resolve(expr: str, ctx: _Context, depth: int = 0) -> set[Read] | None:
    """What key(s) *expr* can be, or ``None`` when it cannot be worked out."""
    expr = expr.strip()
    while _CASE.search(expr):
        expr = _CASE.sub("", expr).strip()
    if depth > 3 or not expr:
        return None
    if "??" in expr or "||" in expr:
        parts = [_resolve(part, ctx, depth + 1) or _found_by_find(part) for part in re.split(r"\?\?|\|\|", expr)]
        known = [part for part in parts if part]
        return set().union(*known) if len(known) == len(parts) else None
    if m := _STRING.match(expr):
        return {Read("name", m.group(2))}
    if m := _TEMPLATE.match(expr):
        head, tail = m.group(1), m.group(2)
        inner_expr = expr[len(head) + 3 : len(expr) - len(tail) - 2].strip()
        inner = _resolve(inner_expr, ctx, depth + 1)
        if inner and all(r.kind == "name" for r in inner):
            upper = inner_expr.endswith(".toUpperCase()")
            return {Read("name", head + (r.value.upper() if upper else r.value) + tail) for r in inner}
        if not _NAME.fullmatch((head or tail).lstrip("_") or "_"):
            return None
        if head:
            return {Read("prefix", head)}
        return {Read("suffix", tail)} if tail else None
    if m := _JOIN.match(expr):
        heads = _resolve(m.group(1), ctx, depth + 1)
        joined = {Read("prefix", r.value + m.group(3)) for r in heads or () if r.kind == "name"}
        return joined or None
    if m := _CONCAT_HEAD.match(expr):
        return {Read("prefix", m.group(2))}
    if m := _CONCAT_TAIL.search(expr):
        return {Read("suffix", m.group(2))}
    if m := re.fullmatch(rf"(?:{_ID}\.)*({_ID})", expr):
        ident = m.group(1)
        if "." in expr and not re.fullmatch(r"[A-Z][A-Z0-9_]*", ident):
            return None  # part.name, options.key: a field of some object, not a constant
        found = set[Read]()
        for rhs in ctx.file.assignments(ident, ctx.site):
            value = _leading_expression(rhs)
            resolved = _resolve(value, ctx, depth + 1) if value and value != expr else None
            found |= resolved or set()
        if not found:
            found = set(ctx.constants.get(ident, ())) or set(ctx.constants.get(ident.rstrip("0123456789"), ()))
        return found or None
    if m := re.match(rf"^(?:\(0,\s*)?(?:{_ID}\.)*({_ID})\)?\(", expr):
        found = set[Read]()
        for body in ctx.file.returned_template(m.group(1)):
            value = _leading_expression(body)
            found |= (_resolve(value, ctx, depth + 1) if value else None) or set()
        fn = m.group(1)
        return (found or set(ctx.constants.get(fn, ())) or set(ctx.constants.get(fn.rstrip("0123456789"), ()))) or None
    return None


def _found_by_find(expr: str) -> set[Read] | None:
    """``Object.keys(process.env).find(k => k.toLowerCase() === "path")``: that name."""
    m = re.search(rf"\.find\(\s*\(?\s*({_ID})\s*\)?\s*=>\s*\1\.toLowerCase\(\)\s*===?\s*([\"'])(\w+)\2\s*\)", expr)
    return {Read("name", m.group(3).upper())} if m else None


def _leading_expression(text: str) -> str | None:
    """The expression at the start of *text*, up to a ``,``/``;``/closing bracket at depth 0."""
    got = _balanced(text, 0, ",;\n")
    return (got[0].strip() or None) if got is not None else None


@dataclass(frozen=True)
class _EnvObject:
    """An expression that is the environment, and the stretch of the file where it is."""

    pattern: str
    start: int = 0
    end: int = -1


def _env_objects(text: str) -> list[_EnvObject]:
    """The expressions that are the environment in this file (minified aliases: nearby only)."""
    objects = [_EnvObject(_PROCESS_ENV)]
    aliases = [
        (m.group(1), m.start())
        for m in re.finditer(rf"(?<![\w$.])({_ID})\s*=\s*{_PROCESS_ENV}(?!\s*(?:\.|\?\.|\[|&&))", text)
    ]
    aliases += [
        (m.group(1) or "env", m.start())
        for m in re.finditer(
            rf"\{{\s*env(?:\s*:\s*({_ID}))?\s*\}}\s*(?:=\s*(?:globalThis\.)?process\b|from\s*[\"'](?:node:)?process[\"'])", text
        )
    ]
    for m in re.finditer(rf"function\s+({_ID})\s*\(\s*\)\s*\{{\s*return\s+{_PROCESS_ENV}\s*[;}}]", text):
        objects.append(_EnvObject(rf"(?<![\w$.]){re.escape(m.group(1))}\(\s*\)"))
    for name, at in aliases:
        end = -1 if len(name) >= 3 else _rebound(text, name, at)
        objects.append(_EnvObject(rf"(?<![\w$.]){re.escape(name)}(?![\w$])", at, end))
    return objects


def _rebound(text: str, name: str, at: int) -> int:
    """Where a short minified alias is bound again (another ``x =``, a parameter, a declaration)."""
    n = re.escape(name)
    binding = re.compile(
        rf"(?<![\w$.]){n}\s*=(?![=>])|[(,]\s*{n}\s*(?:[,)]|=(?![=>]))|(?:let|const|var)\s+{n}(?![\w$])"
        rf"|(?<![\w$.]){n}\s*=>|\.\.\.{n}(?![\w$])"
    )
    first = re.compile(rf"(?<![\w$.]){n}\s*=").search(text, at)
    start = first.end() if first else at
    again = binding.search(text, start)
    return again.start() if again else len(text)


def _finditer(pattern: str, text: str, obj: _EnvObject) -> Iterable[re.Match[str]]:
    end = len(text) if obj.end < 0 else min(len(text), obj.end)
    return re.compile(pattern).finditer(text, obj.start, end)


def reader_functions(text: str, known: Iterable[str] = ()) -> set[str]:
    """Names of functions whose first parameter ends up as a key of the environment.

    Directly (``process.env[p]``, ``p in process.env``) or by handing it, or its upper- or
    lower-case form, to another reader (``getProxyEnv(key)`` calls ``readEnv(key.toUpperCase())``).
    *known* are readers defined elsewhere.
    """
    readers = set(known)
    objects = _env_objects(text)
    heads = (
        re.compile(rf"function\s+({_ID})\s*\(\s*({_ID})[^)]*\)\s*\{{"),
        re.compile(rf"(?<![\w$.])({_ID})\s*=\s*(?:async\s*)?\(\s*({_ID})[^)]*\)\s*=>"),
        re.compile(rf"(?<![\w$.])({_ID})\s*=\s*(?:async\s*)?({_ID})\s*=>"),
        re.compile(rf"(?<=[{{,;}}])\s*(?:async\s+)?(?!(?:if|for|while|switch|catch|with|function)\b)({_ID})\s*\(\s*({_ID})[^)]*\)\s*\{{"),
    )
    functions = [(m.group(1), m.group(2), m.start(), text[m.end() : m.end() + 400]) for h in heads for m in h.finditer(text)]
    functions = [f for f in functions if len(f[0]) >= 3]
    grew = True
    while grew:
        grew = False
        for fn, param, at, body in functions:
            if fn in readers:
                continue
            keys = [re.escape(param)]
            keys += [re.escape(m.group(1)) for m in re.finditer(rf"({_ID})\s*=\s*{re.escape(param)}\.(?:toUpperCase|toLowerCase|trim)\(\)", body)]
            key = "|".join(keys)
            direct = any(
                re.search(rf"(?:{o.pattern})(?:\?\.)?\[\s*(?:{key})\s*\]|(?<![\w$.])(?:{key})\s+in\s+(?:{o.pattern})", body)
                for o in objects
                if o.end < 0 or o.start <= at < o.end
            )
            called = any(re.search(rf"(?<![\w$]){re.escape(r)}\(\s*(?:{key})\s*[,)]", body) for r in readers)
            if direct or called:
                readers.add(fn)
                grew = True
    return readers


def scan_source(
    text: str, readers: Iterable[str] = (), constants: Mapping[str, Iterable[Read]] | None = None
) -> set[tuple[Read, str]]:
    """Every read in *text*, each with a short excerpt of the site that shows it.

    *readers* are reader-function names found in other files; *constants* the string
    constants of every scanned file (see ``string_constants``), for imported key names.
    """
    ctx = _Context(text, constants or {})
    found: set[tuple[Read, str]] = set()

    all_readers = reader_functions(text, readers) | set(readers)

    def add(key: str, site: int) -> None:
        excerpt = text[max(0, site - 40) : site + 80].replace("\n", " ")
        if _reader_parameter(text, key.strip(), site, all_readers):
            return  # the body of a reader function: its callers name the keys
        ctx.site = site
        resolved = _iterated_list(text, key, site, ctx) or _scanned_family(text, site) or _resolve(key, ctx)
        if resolved is None:
            found.add((Read("unresolved", _normalise(text[max(0, site - 30) : site + len(key) + 30])), excerpt))
        else:
            found.update((r, excerpt) for r in resolved)

    for obj in _env_objects(text):
        p = obj.pattern
        for m in _finditer(rf"(?:{p})(?:\?\.|\.)({_ID})(?!\s*\()", text, obj):
            if _NAME.fullmatch(m.group(1)):
                found.add((Read("name", m.group(1)), text[max(0, m.start() - 40) : m.end() + 40]))
        for m in _finditer(rf"(?:{p})\s*(?:\?\.)?\[", text, obj):
            got = _balanced(text, m.end(), "]")
            if got is not None:
                add(got[0], m.start())
        for m in _finditer(rf"(?<=[(>!&|,?:=;{{\s])({_ID}\s+|\"[^\"\s]*\"\s*|'[^'\s]*'\s*|[\w$.]+\([^()]*\)\s*)in\s+(?:{p})(?![\w$])", text, obj):
            if m.group(1).strip() not in ("let", "const", "var") and _after_operator(text, m.start()):
                add(m.group(1).strip(), m.start())
        for m in _finditer(rf"\{{([^{{}}=]*)\}}\s*=\s*(?:{p})(?![\w$.\[?])", text, obj):
            for part in m.group(1).split(","):
                key = part.split(":")[0].split("=")[0].strip()
                if key and not key.startswith("...") and _NAME.fullmatch(key):
                    found.add((Read("name", key), m.group(0)[:120]))
        for m in _finditer(rf"Object\.(?:keys|entries)\(\s*(?:{p})\s*\)|for\s*\(\s*(?:let|const|var)?\s*{_ID}\s+in\s+(?:{p})\s*\)", text, obj):
            _scan_whole(text, m.start(), m.end(), found)
        for m in _finditer(rf"(?<![\w$])({_ID}(?:\.{_ID})*)\(\s*(?:[^(),]{{1,40}},\s*)?(?:{p})\s*[,)]|return\s+(?:{p})\s*[;}}]", text, obj):
            if obj.pattern != _PROCESS_ENV or (m.group(1) or "").startswith("Object."):
                continue  # an alias named env is too often some other value in another scope
            if m.group(1) is None and re.search(rf"function\s+{_ID}\s*\(\s*\)\s*\{{\s*$", text[max(0, m.start() - 60) : m.start()]):
                continue  # a getter (function getEnv(){return process.env}): its calls are the environment
            # the whole environment handed to a function or returned: what the receiver reads is not seen here
            site = _normalise(text[max(0, m.start() - 30) : m.end() + 30])
            found.add((Read("unresolved", site), text[max(0, m.start() - 40) : m.end() + 80]))
    _selectors(text, ctx, found)
    for fn in all_readers:
        for m in re.finditer(rf"(?<![\w$.]){re.escape(fn)}\)?\(|\.{re.escape(fn)}\)?\(", text):
            got = _balanced(text, m.end(), ",")
            if got is None or not got[0].strip() or _is_definition(text, m.start(), m.end()):
                continue
            add(got[0], m.start())
    return found


def _after_operator(text: str, start: int) -> bool:
    """Whether the code before *start* ends in an operator (``(key in env)``), not prose."""
    before = text[max(0, start - 40) : start].rstrip()
    return not before or before[-1] in "(>!&|,?:=;{" or re.search(r"(?:return|let|const|var)$", before) is not None


def _reader_parameter(text: str, key: str, site: int, readers: set[str]) -> bool:
    """Whether *key* at *site* is the parameter of a reader function (its calls are scanned)."""
    if not re.fullmatch(_ID, key):
        return False
    before = text[max(0, site - 400) : site]
    derived = re.search(rf"(?<![\w$.]){re.escape(key)}\s*=\s*({_ID})\.(?:toUpperCase|toLowerCase|trim)\(\)", before)
    k = re.escape(derived.group(1) if derived else key)
    heads = (
        rf"(?:function\s+({_ID})\s*\(\s*{k}\b|({_ID})\s*=\s*(?:async\s*)?\(?\s*{k}\s*[,:)=]"
        rf"|(?<=[{{,;}}])\s*(?:async\s+)?({_ID})\s*\(\s*{k}\s*[,)])"
    )
    return any(next(g for g in m.groups() if g) in readers for m in re.finditer(heads, before))


def _iterated_list(text: str, key: str, site: int, ctx: _Context) -> set[Read] | None:
    """``["CI", "TRAVIS"].some(k => k in env)``, ``for (const k of [A_ENV, "B"])``: what *key* runs over."""
    if not re.fullmatch(_ID, key.strip()):
        return None
    before = text[max(0, site - 300) : site]
    k = re.escape(key.strip())
    method = rf"\[([^\[\]]*)\]\.(?:some|every|filter|find|forEach|map)\(\s*(?:function\s*)?\(?\s*{k}\s*\)?\s*(?:=>|\{{)[^\[\]]*$"
    loop = rf"for\s*\(\s*(?:let|const|var)\s+{k}\s+of\s*\[([^\[\]]*)\]\s*\)[^\[\]]*$"
    m = re.search(method, before) or re.search(loop, before)
    if m is None:
        return None
    items = [item.strip() for item in m.group(1).split(",") if item.strip()]
    resolved = [_resolve(item, ctx) for item in items]
    if not items or not all(resolved):
        return None
    return set().union(*(r for r in resolved if r))


def _scanned_family(text: str, site: int) -> set[Read] | None:
    """A key taken from a filtered whole-environment scan just before *site*: its family."""
    before = text[max(0, site - 300) : site]
    scans = list(re.finditer(r"Object\.(?:keys|entries)\(", before))
    if not scans:
        return None
    m = scans[-1]
    window = before[m.end() :]
    families = {Read("prefix", f[1]) for f in re.findall(r"""startsWith\(\s*(["'])([A-Za-z0-9_]+)\1""", window)}
    families |= {Read("prefix", f.upper()) for f in re.findall(r"/\^([A-Za-z0-9_]+)/i?\.test\(", window)}
    return families or None


def _is_definition(text: str, start: int, args: int) -> bool:
    """Whether the call-like text at *start* is the reader's own head (``function f(k){``, ``env(name){``)."""
    before = text[max(0, start - 9) : start]
    return before.rstrip().endswith("function") or re.match(rf"\s*{_ID}\s*(?:,[^()]*)?\)\s*\{{", text[args:]) is not None


def _scan_whole(text: str, start: int, end: int, found: set[tuple[Read, str]]) -> None:
    """An enumeration of the whole environment: the family its filter selects."""
    window = text[end : end + 150]
    excerpt = text[max(0, start - 40) : end + 120]
    if re.match(r"\s*\.length\s*>\s*0", window):
        return  # a test for an empty environment, not a read of any name
    families = {Read("prefix", m.group(2)) for m in re.finditer(r"""startsWith\(\s*(["'])([A-Za-z0-9_]+)\1""", window)}
    families |= {Read("prefix", m.group(1).upper()) for m in re.finditer(r"/\^([A-Za-z0-9_]+)/i?\.test\(", window)}
    families |= {
        Read("name", m.group(2).upper())
        for m in re.finditer(r"""toLowerCase\(\)\s*===?\s*(["'])([a-z0-9_]+)\1""", window)
    }
    if families:
        found.update((f, excerpt) for f in families)
    else:
        found.add((Read("unresolved", _normalise(text[max(0, start - 30) : end + 60])), excerpt))


def _selectors(text: str, ctx: _Context, found: set[tuple[Read, str]]) -> None:
    """AWS SDK config loaders: ``environmentVariableSelector: (env) => env[KEY]``."""
    head = re.compile(
        rf"environmentVariableSelector\s*(?::\s*(?:async\s*)?(?:\(\s*({_ID})[^)]*\)|({_ID}))\s*=>|:\s*function\s*\(\s*({_ID})|\(\s*({_ID}))"
    )
    for m in head.finditer(text):
        param = next(g for g in m.groups() if g)
        stop = text.find("configFileSelector", m.end())
        body = text[m.end() : stop if 0 < stop - m.end() < 1500 else m.end() + 800]
        p = re.escape(param)
        keys = [r.group(1) for r in re.finditer(rf"(?<![\w$.]){p}(?:\?\.|\.)({_ID})(?!\s*\()", body)]
        found.update((Read("name", k), body[:160]) for k in keys)
        sites = [_balanced(body, r.end(), "]") for r in re.finditer(rf"(?<![\w$.]){p}\s*(?:\?\.)?\[", body)]
        sites += [_balanced(body, r.end(), ",") for r in re.finditer(rf"Selector\w*\(\s*{p}\s*,", body)]
        exprs = [got[0] for got in sites if got is not None]
        exprs += [
            r.group(1)
            for r in re.finditer(rf"([\w$.]+\([^()]*\)|{_ID})\s+in\s+{p}(?![\w$])", body)
            if _after_operator(body, r.start())
        ]
        ctx.site = m.end()
        for key in exprs:
            resolved = _resolve(key, ctx)
            if resolved is None:
                found.add((Read("unresolved", _normalise(f"environmentVariableSelector: env[{key}]")), body[:160]))
            else:
                found.update((r, body[:160]) for r in resolved)


def _normalise(site: str) -> str:
    """A site's text without what a new build renumbers (``env3`` -> ``env``, whitespace)."""
    site = re.sub(r"\s+", " ", site)
    return re.sub(r"(?<=[A-Za-z_])\d+\b", "", site).strip()
