"""Running groups: the imperative shell between a loaded definition and its evidence.

    engine
    ├── config     EngineConfig (what the caller decides), ModelBackend, outcomes
    ├── preflight  the pre-run check of every selected variant, before any subject starts
    ├── group      one group: fixture and bundles, the variants in order, publication, grading
    ├── group_run  GroupRun: what stays fixed for one group's run, carried through the loop
    ├── variant    one variant: sources, launch, the host run, its persisted evidence
    ├── confine    the kernel confinement of one variant's pi: roots, rules file, wrapper, record
    └── batch      the batch summary ``result.json``, written last
"""
