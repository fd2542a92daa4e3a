"""Pure text rendering of stored results, for the console script.

    render
    ├── text   making untrusted text safe to print (paths on one line, no control sequences)
    └── views  the grade first, then the selected variants' runs
"""
