"""``python -m pytest_skill_eval``: the ``skill-eval`` console script."""

from pytest_skill_eval.commands.cli import main

raise SystemExit(main())
