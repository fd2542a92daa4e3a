"""What both shells use: the pytest plugin (``plugin/``) and the ``skill-eval`` script
(``commands/``) stand side by side on the top floor and never import each other; what they
share lives here, one floor down (docs/architecture.md, Floors).

    services
    ├── check         pre-run checks of definitions (``skill-eval check``, ``--collect-only -v``)
    ├── report        the HTML report of a stored result (``skill-eval report``, ``--skill-eval-html``)
    ├── step_summary  the Markdown summary for ``GITHUB_STEP_SUMMARY`` (session end, ``merge``)
    └── cancellation  whether a KeyboardInterrupt pytest reports is the user's Ctrl-C
"""
