"""``result.json`` as engine/batch.py writes it from the group directories on disk.

tests/plugin/test_batch_summary.py checks the summary of real runs however they ended; here
the writer is called on hand-made evidence.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from plugin.helpers import write_json


def test_batch_summary_ignores_a_killed_writers_leftovers(tmp_path: Path) -> None:
    """A result whose writer died is read by the summary as if the leftovers were not there."""
    from pytest_skill_eval.engine.batch import write_batch_summary
    from pytest_skill_eval.evidence.layout import group_dirs

    groups = tmp_path / "groups"
    good = groups / "001-good"
    from pytest_skill_eval.evidence.records import GroupRecord, VariantStateRecord
    from pytest_skill_eval.grading.results import GroupGrade

    done = VariantStateRecord("complete", None)
    record = GroupRecord(id="good", position=1, path="good.json", suite=None, type="body", state="complete",
                         grade_state="graded", variants={"baseline": done, "candidate": done}, review_questions=())
    write_json(good / "group.json", record.to_json())
    write_json(good / "grade.json", GroupGrade("good", "graded").to_json())
    stray = Path(tempfile.mkdtemp(prefix=".002-ghost.", dir=groups))
    write_json(stray / "group.json", {"id": "ghost", "state": "complete", "variants": {}})
    (groups / ".group.json.abc.tmp").write_text("{")
    assert [p.name for p in group_dirs(tmp_path)] == ["001-good"]
    summary = write_batch_summary(tmp_path, "r", interrupted=False)
    assert [(g.id, g.state, g.variants) for g in summary.groups] == [
        ("good", "complete", {"baseline": "complete", "candidate": "complete"})]
