"""The ``skill-eval`` console script: ``run``, ``view``, ``regrade``, ``check``, ``host``.

    commands
    ├── cli      argument parsing and dispatch
    ├── view     reading a stored result for ``view`` (rendered by :mod:`..render.views`)
    ├── regrade  grading stored evidence again into ``grade-regraded-<stamp>.json``
    └── check    the pre-run check without running anything
"""
