"""Remembered pair decisions (docs/dream.md, "Remembered pairs"): the memo only saves work,
never changes a plan, and its file is a cache that any damage turns into an empty memo."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest
from mem0_plugin.cli import dream_cli
from mem0_plugin.dream import relations
from mem0_plugin.dream.analysis import analyse
from mem0_plugin.dream.plan import plan_to_json
from mem0_plugin.records import Memory
from mem0_plugin.relation import pair_file
from mem0_plugin.relation.pair_memo import PairMemo, key, text_digest

NOW = datetime(2026, 11, 30, tzinfo=timezone.utc)
OLD_TEXT = "Local Postgres from docker-compose listens on port 5432"
NEW_TEXT = "Local Postgres from docker-compose listens on port 5433"


def memory(memory_id: str, text: str, day: int, type_: str = "environmental") -> Memory:
    return Memory(
        id=memory_id,
        memory=text,
        user_id="alice",
        app_id="acme-api",
        metadata={"type": type_},
        created_at=f"2026-10-{day:02d}T10:00:00+00:00",
        updated_at=f"2026-10-{day:02d}T10:00:00+00:00",
    )


def vectors_at(cosine: float) -> dict[str, np.ndarray]:
    """Two unit vectors whose cosine is `cosine` (as float32 arithmetic gives it)."""
    a = np.zeros(8, dtype=np.float32)
    a[0] = 1.0
    b = np.zeros(8, dtype=np.float32)
    b[0], b[1] = cosine, np.sqrt(1 - cosine**2)
    return {"m1": a, "m2": b}


def plan_of(memories, vectors, pairs=None):
    return analyse(
        memories, {}, NOW, user_id="alice", project_id="acme-api", policy_source="test", vectors=vectors, pairs=pairs
    )


MEMORIES = [memory("m1", OLD_TEXT, 1), memory("m2", NEW_TEXT, 20)]
PAIR_KEY = key(
    False, text_digest(OLD_TEXT), text_digest(NEW_TEXT), nearest=True
)  # (two memories: each other's closest)


def test_a_remembered_decision_is_used_only_at_the_same_cosine():
    vectors = vectors_at(0.93)
    memo = PairMemo()
    plan = plan_of(MEMORIES, vectors, memo)
    assert [c.ids for c in plan.conflicts] == [("m2", "m1")]  # the port changed: a conflict
    [(pair_key, (cosine, decided, question))] = memo.used.items()
    assert (pair_key, decided, question, memo.decided) == (PAIR_KEY, "conflict", None, 1)

    again = PairMemo(known=dict(memo.used))
    assert plan_to_json(plan_of(MEMORIES, vectors, again)) == plan_to_json(plan)
    assert again.decided == 0 and not again.changed  # nothing new: the file need not be written

    # The memo is really consulted: a (forged) remembered "merge" at this very cosine is obeyed …
    forged = PairMemo(known={PAIR_KEY: (cosine, "merge", None)})
    assert [m.ids for m in plan_of(MEMORIES, vectors, forged).merges] == [("m1", "m2")]
    # … but at another cosine (another model, other vectors) the pair is decided again.
    stale = PairMemo(known={PAIR_KEY: (cosine - 1e-6, "merge", None)})
    assert plan_to_json(plan_of(MEMORIES, vectors, stale)) == plan_to_json(plan)
    assert stale.decided == 1


def test_the_key_is_ordered_and_says_whether_the_type_records_events_and_the_two_are_closest():
    older, newer = text_digest(OLD_TEXT), text_digest(NEW_TEXT)
    assert key(False, older, newer) != key(False, newer, older)
    assert key(True, older, newer) != key(False, older, newer)
    assert key(False, older, newer, nearest=True) != key(False, older, newer)
    assert len(key(False, older, newer)) == len(pair_file.RECORD.pack(key(False, older, newer), 0.5, 0)[:21])


def test_the_file_round_trips_and_damage_reads_as_an_empty_memo(tmp_path):
    path = tmp_path / "pairs" / "scope.bin"
    memo = PairMemo()
    memo.decide(PAIR_KEY, 0.93, lambda: ("conflict", None))
    memo.decide(key(True, b"a" * 10, b"b" * 10), 0.88, lambda: (None, "merge"))
    pair_file.write_memo(path, memo)
    assert pair_file.read_memo(path).known == memo.used
    data = path.read_bytes()
    head = len(pair_file.MAGIC) + 32
    damaged = {
        "missing": None,
        "empty": b"",
        "truncated": data[:-3],
        "other rules": pair_file.MAGIC + b"\0" * 32 + data[head:],
        "another format": b"{}" + data,
        "unknown code": data[:-1] + bytes([len(pair_file.CODES)]),
    }
    for name, content in damaged.items():
        path.unlink(missing_ok=True)
        if content is not None:
            path.write_bytes(content)
        assert pair_file.read_memo(path).known == {}, name


def test_writing_is_skipped_when_nothing_changed_and_never_fails_the_run(tmp_path):
    path = tmp_path / "pairs.bin"
    pair_file.write_memo(path, PairMemo())
    assert not path.exists()
    memo = PairMemo(known={PAIR_KEY: (0.93, "conflict", None)})
    memo.decide(PAIR_KEY, 0.93, lambda: pytest.fail("known"))
    pair_file.write_memo(path, memo)
    assert not path.exists()  # the same pairs as known
    memo.decided = 1
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    pair_file.write_memo(blocked / "pairs.bin", memo)  # cannot be written: no error
    no_pairs = PairMemo(known={PAIR_KEY: (0.93, "conflict", None)})
    assert not no_pairs.changed  # a run that judged no pair (no vectors) keeps the file


def test_the_rules_digest_covers_every_module_the_pair_rules_import():
    """`rules_digest` must cover every module whose code can change a decision: `relations`,
    where it is composed, and all that `meaning` imports; no rule module imports the package
    lazily inside a function (checked by ast), where the digest would miss it."""
    code = (
        "import sys, mem0_plugin.relation.meaning\n"
        "print('\\n'.join(m.__file__ for n, m in sys.modules.items() if n.startswith('mem0_plugin')"
        " and not hasattr(m, '__path__')))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    covered = {path.resolve() for path in pair_file.rule_sources()}
    assert {Path(path).resolve() for path in loaded} <= covered
    import ast

    for path in covered:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(node) for node in tree.body}
        nested = [
            node
            for node in ast.walk(tree)
            if id(node) not in top
            and (
                (isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("mem0_plugin")))
                or (isinstance(node, ast.Import) and any(a.name.startswith("mem0_plugin") for a in node.names))
            )
        ]
        assert nested == [], f"{path} imports inside a function: the rules digest would miss it"


@pytest.fixture
def semantic_env(mem0_home, monkeypatch, tmp_path):
    monkeypatch.delenv("MEM0_EMBEDDER")
    monkeypatch.chdir(tmp_path)
    records = [
        {"memory": OLD_TEXT, "metadata": {"type": "environmental"}, "created_at": "2026-04-01T10:00:00+00:00"},
        {"memory": NEW_TEXT, "metadata": {"type": "environmental"}, "created_at": "2026-11-01T10:00:00+00:00"},
    ]
    Path("records.json").write_text(json.dumps(records))
    from mem0_plugin.cli import memories_cli

    assert memories_cli.main(["import", "records.json"]) == 0
    return mem0_home


def test_auto_remembers_its_pairs_and_the_next_night_decides_none(semantic_env, capsys, monkeypatch):
    calls = []
    decide = relations.relation
    monkeypatch.setattr(relations, "relation", lambda *a, **k: calls.append(1) or decide(*a, **k))
    now = ["--now", "2026-11-30T00:00:00+00:00"]
    capsys.readouterr()
    assert dream_cli.main(["--plan", "--json", *now]) == 0
    plan = capsys.readouterr().out
    assert [c["ids"] for c in json.loads(plan)["conflicts"]] != [] and calls == [1]
    folder = semantic_env / "dream" / "pairs"
    assert not folder.exists()  # --plan writes nothing

    assert dream_cli.main(["--auto", *now]) == 0
    line = capsys.readouterr().out
    [path] = folder.iterdir()
    assert calls == [1, 1] and "conflicts_skipped=1" in line
    written = path.read_bytes()

    assert dream_cli.main(["--auto", *now]) == 0
    assert capsys.readouterr().out == line and calls == [1, 1]  # the pair was remembered
    assert dream_cli.main(["--plan", "--json", *now]) == 0
    conflicts = json.loads(plan)["conflicts"]
    assert json.loads(capsys.readouterr().out)["conflicts"] == conflicts  # (the plan also counts the reminder)
    assert calls == [1, 1]  # --plan reads what --auto remembered

    monkeypatch.setenv("MEM0_EMBEDDER", "none")
    assert dream_cli.main(["--auto", *now]) == 0  # lexical: no pair judged, the memo is kept
    assert path.read_bytes() == written

    monkeypatch.delenv("MEM0_EMBEDDER")
    path.write_bytes(b"garbage")
    capsys.readouterr()
    assert dream_cli.main(["--plan", "--json", *now]) == 0
    assert json.loads(capsys.readouterr().out)["conflicts"] == conflicts
    assert calls == [1, 1, 1]  # a damaged file: decided again
