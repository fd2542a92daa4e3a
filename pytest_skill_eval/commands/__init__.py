"""The ``skill-eval`` console script: ``run``, ``view``, ``report``, ``regrade``, ``check``, ``host``.

    commands
    ├── cli      argument parsing and dispatch
    ├── view     reading a stored result for ``view`` (rendered by :mod:`..render.views`)
    ├── report   reading a stored result for the HTML report (rendered by :mod:`..render.html`)
    ├── regrade  grading stored evidence again into ``grade-regraded-<stamp>.json``
    └── check    the pre-run check without running anything
"""
