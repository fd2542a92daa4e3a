"""Schema-version-1 group and suite definitions, loaded into frozen dataclasses.

    definitions
    ├── model      Group, Suite, Variant, Source, Expectation, ModelSpec, Runtime (frozen)
    ├── document   reading one file into a strict JSON document (regular files, no surrogates)
    ├── rules      cross-field rules JSON Schema cannot word clearly (pure)
    ├── loading    structure (JSON Schema) -> rules -> canonical containment -> model
    └── selection  --skill-eval-group / --skill-eval-variant selectors

Loading happens in three layers, every problem of a file reported at once:

1. **structure**: the JSON Schema files shipped under ``schemas/`` (draft 2020-12),
   whose errors are rewritten into this package's own ``expected …, found …`` text;
2. **cross-field rules** (:mod:`.rules`): lexical path containment, target and turn ranges,
   tools per group type, the environment-name policy, unique ids;
3. **canonical containment** (file system): symlinks may not lead declared
   working-tree paths, suite group references or the definition file out of the root.

Kind-specific expectation fields are kept raw and checked at grade time, as the spec
requires: a malformed expectation becomes ``grade-error`` evidence, not a load error.
"""
