"""The pi host: its installation, its launch, its wire protocol and the process.

    host
    ├── install     the managed pi install (npm, pinned lock file, node 22), explicit hosts
    ├── launch      a variant's argv, environment, private agent dir and HOME
    ├── protocol    pi's JSONL framing, records, normalized turns, usage (pure)
    ├── driver      one pi process: JSON and RPC modes, settlement, no-progress detection
    ├── process     killing a whole process tree
    ├── models      which provider a group uses; the scripted server on first use
    ├── confinement the kernel confinement's policy: roots by role, rights, the model's endpoints (pure)
    ├── landlock    Linux Landlock by raw system calls, and the exec wrapper pi starts through
    ├── netns       pi's private network namespace, and the relay that is its only way out
    └── extensions/ the guard, tool gate and observer pi loads (JavaScript)
"""
