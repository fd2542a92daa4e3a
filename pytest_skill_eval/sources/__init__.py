"""What a variant is made of: snapshots of its sources, isolated (redaction, which grading uses too, is
``pytest_skill_eval.redaction`` on the bottom floor).

    sources
    ├── snapshots  working-tree and exact-Git-commit snapshots (GitPython); odd entries refused
    ├── isolation  fixture and bundle snapshots, a variant's materialised skills and context
    └── scratch    private per-run scratch directories, and sweeping stale ones
"""
