"""The pytest layer: it only orchestrates.

    plugin
    ├── hooks     the pytest hooks (the ``pytest11`` entry point): options, collection, reporting
    ├── items     the definition file node, one item per group, broken-reference items
    ├── declared  which paths a run declares and which groups they name
    ├── settings  the run settings checked once: trials, seed, pass rate, alpha, timeout, reruns
    ├── session   the per-process session: result id, selection, verdicts, summary
    ├── finish    a Ctrl-C while the session finishes is noted, not raised
    ├── report    the HTML report at session end (``--skill-eval-html``)
    ├── progress  live progress while a group runs
    └── junit     per-variant, per-expectation and per-comparison JUnit entries
"""
