"""What a variant is made of: snapshots of its sources, isolated and redacted.

    sources
    ├── snapshots  working-tree and exact-Git-commit snapshots (GitPython); odd entries refused
    ├── isolation  fixture and bundle snapshots, a variant's materialised skills and context
    ├── redaction  inherited secret values kept out of every byte written
    └── scratch    private per-run scratch directories, and sweeping stale ones
"""
