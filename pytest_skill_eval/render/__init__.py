"""Pure rendering of stored results, for the console script and the HTML report.

    render
    ├── text       making untrusted text safe to print (paths on one line, no control sequences)
    ├── views      the grade first, then the selected variants' runs
    └── html       the self-contained HTML report (Jinja2 templates in templates/)
"""
