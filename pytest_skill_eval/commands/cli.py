"""``skill-eval``: run, rerun, list, view, regrade, check, init, and manage the pi host.

``run`` drives the same machinery as the pytest plugin (it runs pytest in-process) and
keeps the seed's exit-code contract: failed checks exit 0; invalid, infrastructure
failure, cancellation or grade-error exit non-zero.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_skill_eval.errors import SkillEvalError
from pytest_skill_eval.safe_text import neutralise


def _positive(raw: str) -> int:
    if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of trials of at least 1, found {raw!r}")
    return int(raw)


def _bounded(what: str, low: float, high: float, *, high_included: bool = False) -> Any:
    """An argparse type: a number above *low* and below *high* (or at most, when included)."""
    def parse(raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not (low < value < high or (high_included and value == high)):
            upper = f"at most {high:g}" if high_included else f"below {high:g}"
            raise argparse.ArgumentTypeError(f"expected {what} above {low:g} and {upper}, found {raw!r}")
        return value
    return parse


def _plan_options(parser: argparse.ArgumentParser) -> None:
    from pytest_skill_eval.decision.planning import DEFAULT_ALPHA, DEFAULT_EFFECT, DEFAULT_POWER

    parser.add_argument("--min-effect", metavar="D", type=_bounded("a pass-rate difference", 0, 0.5, high_included=True),
                        default=DEFAULT_EFFECT, help=f"The pass-rate difference to detect (0 < D <= 0.5; default {DEFAULT_EFFECT:g})")
    parser.add_argument("--power", metavar="P", type=_bounded("a power", 0, 1), default=DEFAULT_POWER,
                        help=f"The power to detect it with (0 < P < 1; default {DEFAULT_POWER:g})")
    parser.add_argument("--alpha", metavar="A", type=_bounded("a significance level", 0, 1), default=DEFAULT_ALPHA,
                        help=f"The significance level (0 < A < 1; default {DEFAULT_ALPHA:g})")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="skill-eval", description="Evaluate Agent Skills through the real pi host.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser(
        "run", help="Run a suite or group definition (exits 0 when checks fail; for CI use pytest --skill-eval)",
        usage=("skill-eval run [-h] [--group ID|POSITION] [--variant {baseline,candidate}] [--shard K/N] target "
               "[-- PYTEST_ARGS ...]"),
        epilog="Arguments after -- go to pytest unchanged, e.g. -- -n 4 --junitxml=report.xml. "
               "Exit status: 0 complete (failed checks included), 1 invalid, infrastructure-failed or grade-error, "
               "2 cancelled, 4 usage error, 5 nothing selected. To fail a CI job when the candidate's checks "
               "fail, run pytest --skill-eval TARGET instead (exit 1).",
    )
    run.add_argument("target", help="Suite or group definition path, from the current directory")
    run.add_argument("--group", metavar="ID|POSITION", help="Suite group id or one-based position")
    run.add_argument("--variant", choices=("baseline", "candidate"), help="Run only this variant")
    run.add_argument("--shard", metavar="K/N", help="Run shard K of N of the groups (combine with skill-eval merge)")

    view = sub.add_parser(
        "view", help="Render a stored result",
        epilog="Exit status: 0 shown, 1 shown but some evidence file is not what the view expects "
               "(each is named in the output as problem), 2 no such result or a bad selector.",
    )
    view.add_argument("target", help="Result id, a unique prefix of one, 'latest', or a result directory")
    view.add_argument("--group", help="Group id or one-based position")
    view.add_argument("--variant", choices=("baseline", "candidate"))
    view.add_argument("--trial", type=int, metavar="K",
                      help="For a group run with trials: show trial K's grade and runs after the aggregate")

    report = sub.add_parser(
        "report", help="Write the self-contained HTML report of a stored result",
        epilog="The page is stored as report.html in the result directory (and written to -o FILE too). "
               "Exit status: 0 written, 2 no such result or the page could not be written.",
    )
    report.add_argument("target", help="Result id, a unique prefix of one, 'latest', or a result directory")
    report.add_argument("-o", "--output", metavar="FILE", help="Also write the page to FILE")

    sub.add_parser("list", help="List the stored results of the current directory (the definition root)")

    merge = sub.add_parser(
        "merge", help="Combine the results of --skill-eval-shard K/N runs into one result",
        epilog="Every shard 1..N of one split must be given once, from the same definitions and settings; "
               "the merged result gets a new id, in suite order, as one run writes it (docs/ci.md). "
               "Exit status: as the one run would have exited (0 passed, 1 a group failed or errored, "
               "2 a shard was cancelled, 5 no group selected), 4 the results cannot be merged (nothing written).",
    )
    merge.add_argument("targets", nargs="+", metavar="result",
                       help="A shard result: result id, unique prefix, or result directory")
    merge.add_argument("-o", "--into", metavar="DIR", type=Path,
                       help="Directory to write the merged result into (default: .skill-eval/runs)")
    rerun = sub.add_parser(
        "rerun", help="Run the groups of a stored result again from the inputs it stored, into a new result",
        usage="skill-eval rerun [-h] target [-- PYTEST_ARGS ...]",
        epilog="Definitions, fixture, bundles, skills, context and scripts come from the stored result, not from the "
               "working tree or Git; the settings (fail-on, trials, seed, pass rate, alpha, provider timeout, "
               "rerun-infra) and the variant selection are the stored result's. Arguments after -- go to pytest "
               "(e.g. -- -n 2 -k <group-id>, or --skill-eval-auth=FILE for a real provider). "
               "Exit status: pytest's (0 every group passed under the stored fail-on policy, 1 some failed or "
               "errored, 2 cancelled, 4 usage error, e.g. a result written before results stored their inputs).",
    )
    rerun.add_argument("target", help="Result id, a unique prefix of one, 'latest', or a result directory")

    regrade = sub.add_parser("regrade", help="Re-grade stored evidence without running any subject")
    regrade.add_argument("target", help="Result id, a unique prefix of one, 'latest', or a result directory")

    check = sub.add_parser("check", help="Validate definitions without running any subject")
    check.add_argument("target", help="Suite or group definition path")
    check.add_argument("--skill-eval-auth", metavar="FILE", dest="auth",
                       help="The pi auth.json a run would get: its providers have a credential")
    check.add_argument("--skill-eval-models", metavar="FILE", dest="models",
                       help="The pi models.json a run would merge: custom providers and their apiKey")
    check.add_argument("--variant", choices=("baseline", "candidate"),
                       help="Plan for one variant only (as run --variant would select)")
    check.add_argument("--skill-eval-trials", metavar="N", dest="trials", type=_positive, default=1,
                       help="Plan for N trials per variant (as --skill-eval-trials would run; default 1)")

    _plan_options(check)

    plan = sub.add_parser(
        "plan", help="The trials per arm each comparison and the suite need to decide, the pi runs and expected cost",
        epilog="Exact binomial power (docs/statistics.md). Baseline rates and usage come from the newest stored "
               "result of the same suite (or --result), else the least favourable baseline rate is assumed. "
               "Exit status: 0 planned, 2 a definition does not load or a bad --result (usage errors: 2).",
    )
    plan.add_argument("target", help="Suite or group definition path")
    _plan_options(plan)
    plan.add_argument("--adjust", choices=("holm", "bh", "none"), default="holm",
                      help="The multiplicity adjustment the comparisons will be decided under (default holm)")
    plan.add_argument("--result", metavar="ID",
                      help="Use this stored result (id, unique prefix, 'latest' or directory) instead of the newest "
                           "result of the same suite")

    init = sub.add_parser(
        "init", help="Write a working starting point for evaluating one skill under .skill-eval/<name>/",
        epilog="The skill must be committed in a Git repository: its work tree is the definition root and the "
               "skill at HEAD is the baseline. Nothing is ever overwritten. "
               "Exit status: 0 written, 2 refused (nothing written).",
    )
    init.add_argument("skill_dir", metavar="skill-dir", type=Path, help="The skill directory (the one holding SKILL.md)")

    host = sub.add_parser("host", help="Manage the pi host")
    host_sub = host.add_subparsers(dest="host_command", required=True)
    install = host_sub.add_parser("install", help="Install the pinned pi host into the cache")
    install.add_argument("--force", action="store_true", help="Reinstall even when present")
    host_sub.add_parser("info", help="Show which pi host would be used")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    pytest_args: list[str] = []
    if argv[:1] in (["run"], ["rerun"]) and "--" in argv:
        # split by hand: argparse would let pytest's options swallow --group/--variant
        cut = argv.index("--")
        argv, pytest_args = argv[:cut], argv[cut + 1:]
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        if argv[:1] == ["run"] and exc.code == 2:
            return 4  # a usage error, as pytest numbers it: 2 means cancelled for run
        raise
    args.pytest_args = pytest_args
    from pytest_skill_eval.services.schema_cache import use_schema_cache

    use_schema_cache()
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "rerun":
            from pytest_skill_eval.commands.rerun import rerun

            return rerun(args.target, Path.cwd(), list(args.pytest_args))
        if args.command == "view":
            from pytest_skill_eval.commands.view import render_checked

            text, problems = render_checked(args.target, Path.cwd(), group=args.group, variant=args.variant,
                                            trial=args.trial)
            print(neutralise(text), end="")
            return _problems_exit(problems, "the view")
        if args.command == "report":
            from pytest_skill_eval.services.report import report as write_html

            try:
                written, warnings = write_html(args.target, Path.cwd(), Path(args.output) if args.output else None)
            except OSError as exc:
                print(neutralise(f"skill-eval: error: the report could not be written: {exc}"), file=sys.stderr)
                return 2

            for warning in warnings:
                print(neutralise(f"skill-eval: warning: {warning}"), file=sys.stderr)
            print(f"report written: {written}")
            return 0
        if args.command == "list":
            from pytest_skill_eval.commands.view import list_checked

            text, problems = list_checked(Path.cwd())
            print(neutralise(text), end="")
            return _problems_exit(problems, "the listing")
        if args.command == "merge":
            return _merge(args)
        if args.command == "regrade":
            from pytest_skill_eval.commands.regrade import regrade

            summary, grade_error = regrade(args.target, Path.cwd())
            print(neutralise(summary))
            return 1 if grade_error else 0  # a grade-error fails, as it does for a run
        if args.command == "check":
            from pytest_skill_eval.services.check import check_path

            report, ok = check_path(Path(args.target), Path.cwd(),
                                    auth_file=Path(args.auth).resolve() if args.auth else None,
                                    user_models=Path(args.models).resolve() if args.models else None,
                                    variants=1 if args.variant else 2, trials=args.trials)
            print(neutralise(_with_plan_section(report, args)), end="")
            return 0 if ok else 1
        if args.command == "plan":
            from pytest_skill_eval.commands.plan import plan_path

            print(plan_path(Path(args.target), Path.cwd(), effect=args.min_effect, power=args.power, alpha=args.alpha,
                            adjustment=args.adjust, result=args.result), end="")
            return 0
        if args.command == "init":
            from pytest_skill_eval.commands.init import init_skill, render_report

            here = Path.cwd().resolve()
            print(neutralise(render_report(init_skill(args.skill_dir, here), here)), end="")
            return 0
        if args.command == "host":
            return _host(args)
    except SkillEvalError as exc:
        print(neutralise(f"skill-eval: error: {exc}"), file=sys.stderr)
        return 2
    return 2  # pragma: no cover - argparse requires a command


def _with_plan_section(report: str, args: argparse.Namespace) -> str:
    """The check *report* with ``skill-eval plan``'s text (same options) before its last line, the verdict;
    unchanged when the definitions do not load (the report already says why)."""
    from pytest_skill_eval.commands.plan import plan_path

    try:
        text = plan_path(Path(args.target), Path.cwd(), effect=args.min_effect, power=args.power, alpha=args.alpha)
    except SkillEvalError:
        return report
    body, verdict = report.rstrip("\n").rsplit("\n", 1)
    return f"{body}\n{text}\n{verdict}\n"


def _merge(args: argparse.Namespace) -> int:
    from pytest_skill_eval.commands.merge import EXIT_CANNOT_MERGE, merge, render, write_summary
    from pytest_skill_eval.errors import MergeRefusedError

    try:
        merged = merge(args.targets, Path.cwd(), args.into)
    except MergeRefusedError as exc:
        print(neutralise(f"skill-eval: error: {exc}"), file=sys.stderr)
        return EXIT_CANNOT_MERGE
    print(neutralise(render(merged, args.targets)), end="")
    write_summary(merged, Path.cwd())
    return merged.exit_code


def _problems_exit(problems: bool, reader: str) -> int:
    if not problems:
        return 0
    sys.stdout.flush()
    print(f"skill-eval: error: some evidence files are not what {reader} expects (each is named above as problem)",
          file=sys.stderr)
    return 1


def _host(args: argparse.Namespace) -> int:
    from pytest_skill_eval.host.install import install_managed, resolve_host

    if args.host_command == "install":
        host = install_managed(lambda msg: print(msg, file=sys.stderr, flush=True), force=args.force)
    else:
        host = resolve_host(install_if_missing=False)
    print(f"pi {host.version}\nnode {host.node}\ncli  {host.cli}\nmanaged {host.managed}")
    return 0


class _RunWatcher:
    """Tells a cancelled run (Ctrl-C) apart from definitions that could not be collected."""

    def __init__(self) -> None:
        self.cancelled = False

    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:
        from pytest_skill_eval.services.cancellation import is_cancellation

        # collection errors and xdist's -x/--maxfail stop arrive as KeyboardInterrupt too
        self.cancelled = is_cancellation(excinfo.value)


#: ``skill-eval run`` exit codes (docs/usage.md lists them).
EXIT_COMPLETE = 0  # every selected variant ran and was graded; failed checks are evidence
EXIT_INVALID = 1  # invalid, infrastructure-failed or grade-error (or a definition failed to load)
EXIT_CANCELLED = 2  # Ctrl-C: no queued subject started, observed evidence kept
EXIT_NOTHING_SELECTED = 5  # -k/-m (after --) deselected every group


def _run(args: argparse.Namespace) -> int:
    import pytest

    extra = list(args.pytest_args)
    argv = ["--skill-eval", args.target, "-p", "no:cacheprovider", "-rN"]
    if args.group:
        argv += ["--skill-eval-group", args.group]
    if args.variant:
        argv += ["--skill-eval-variant", args.variant]
    if args.shard:
        argv += [f"--skill-eval-shard={args.shard}"]
    # seed contract: failed checks are behavioural evidence and exit 0
    argv += ["--skill-eval-fail-on", "never", *extra]
    watcher = _RunWatcher()
    code = pytest.main(argv, plugins=[watcher])
    return run_exit_code(int(code), cancelled=watcher.cancelled, target=args.target)


def run_exit_code(code: int, *, cancelled: bool, target: str) -> int:
    """Map pytest's exit status onto the seed's ``run`` contract."""
    import pytest

    if code == pytest.ExitCode.OK:
        return EXIT_COMPLETE
    if code == pytest.ExitCode.TESTS_FAILED:
        return EXIT_INVALID
    if code == pytest.ExitCode.INTERRUPTED:
        return EXIT_CANCELLED if cancelled else EXIT_INVALID
    if code == pytest.ExitCode.NO_TESTS_COLLECTED:
        print(f"skill-eval: nothing to run: no group of {target} was selected; "
              "check the -k/-m arguments given after --", file=sys.stderr)
        return EXIT_NOTHING_SELECTED
    return code  # 3 internal error, 4 usage error


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
