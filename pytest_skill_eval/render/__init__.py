"""Pure rendering of stored results, for the console script and the HTML report.

    render
    ├── text       the renderers' name for safe_text.neutralise and escape_path (untrusted text made safe to print)
    ├── views      the grade first, then the selected variants' runs
    └── html       the self-contained HTML report (Jinja2 templates in templates/)
"""
