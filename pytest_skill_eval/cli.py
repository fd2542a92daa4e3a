"""``skill-eval``: run, view, regrade, check, and manage the pi host.

``run`` drives the same machinery as the pytest plugin (it runs pytest in-process) and
keeps the seed's exit-code contract: failed checks exit 0; invalid, infrastructure
failure, cancellation or grade-error exit non-zero.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from .errors import SkillEvalError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="skill-eval", description="Evaluate Agent Skills through the real pi host.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="Run a suite or group definition")
    run.add_argument("target", help="Suite or group definition path, from the current directory")
    run.add_argument("--group", help="Suite group id or one-based position")
    run.add_argument("--variant", choices=("baseline", "candidate"))
    run.add_argument("pytest_args", nargs=argparse.REMAINDER, help="Extra pytest arguments after --")

    view = sub.add_parser("view", help="Render a stored result")
    view.add_argument("target", help="Result id or result directory")
    view.add_argument("--group", help="Group id or one-based position")
    view.add_argument("--variant", choices=("baseline", "candidate"))

    regrade = sub.add_parser("regrade", help="Re-grade stored evidence without running any subject")
    regrade.add_argument("target", help="Result id or result directory")

    check = sub.add_parser("check", help="Validate definitions without running any subject")
    check.add_argument("target", help="Suite or group definition path")

    host = sub.add_parser("host", help="Manage the pi host")
    host_sub = host.add_subparsers(dest="host_command", required=True)
    install = host_sub.add_parser("install", help="Install the pinned pi host into the cache")
    install.add_argument("--force", action="store_true", help="Reinstall even when present")
    host_sub.add_parser("info", help="Show which pi host would be used")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "view":
            from .views import render

            print(render(args.target, Path.cwd(), group=args.group, variant=args.variant), end="")
            return 0
        if args.command == "regrade":
            from .regrade import regrade_result

            print(regrade_result(args.target, Path.cwd()))
            return 0
        if args.command == "check":
            from .check import check_path

            report, ok = check_path(Path(args.target), Path.cwd())
            print(report, end="")
            return 0 if ok else 1
        if args.command == "host":
            return _host(args)
    except SkillEvalError as exc:
        print(f"skill-eval: error: {exc}", file=sys.stderr)
        return 2
    return 2  # pragma: no cover - argparse requires a command


def _host(args: argparse.Namespace) -> int:
    from .host.install import install_managed, resolve_host

    if args.host_command == "install":
        host = install_managed(lambda msg: print(msg, file=sys.stderr, flush=True), force=args.force)
    else:
        host = resolve_host(install_if_missing=False)
    print(f"pi {host.version}\nnode {host.node}\ncli  {host.cli}\nmanaged {host.managed}")
    return 0


def _run(args: argparse.Namespace) -> int:
    import pytest

    extra = [a for a in args.pytest_args if a != "--"]
    argv = ["--skill-eval", args.target, "-p", "no:cacheprovider", "-rN"]
    if args.group:
        argv += ["--skill-eval-group", args.group]
    if args.variant:
        argv += ["--skill-eval-variant", args.variant]
    # seed contract: failed checks are behavioural evidence and exit 0
    argv += ["--skill-eval-fail-on", "never", *extra]
    code = pytest.main(argv)
    return 0 if code in (pytest.ExitCode.OK,) else int(code)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
