"""The canonical evidence tree under ``.skill-eval/runs/<result-id>/``.

    evidence
    ├── layout    result ids, directory and file names: the only code that knows them
    ├── store     atomic writes, safe copies, reading trees back as bytes or fingerprints
    ├── records   typed records of every stored JSON file (to/from JSON, schema-checked)
    ├── run_records  the records of a run directory (run.json, transcript.json, context observations)
    ├── reader    reading stored evidence back through its records (grading's input)
    ├── locate    finding stored results by id, prefix, ``latest`` or directory

The layout itself is documented in ``docs/evidence.md``.
"""
