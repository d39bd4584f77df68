"""Deep pages on PostgreSQL (docs/stores.md, "Pages on PostgreSQL"): every page, at any depth,
holds the same memories in the same order as the same page of the same memories on SQLite,
also when others write between pages. A real PostgreSQL server (tests/pg_server.py) and a
real SQLite file, loaded with the same memories; pages from row `SHALLOW` on take the
anchored path, so a few thousand memories reach it."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest
from mem0_plugin.filters import compile_filters
from mem0_plugin.records import ACTIVE, MERGED, SUPERSEDED, memory_from_record
from mem0_plugin.store import open_store
from mem0_plugin.store.base import ReadMode
from mem0_plugin.store.postgres.pages import SHALLOW, STEP

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)
N = 2600  # in alice's project; pages of 100 from page SHALLOW / 100 + 1 on are anchored
MODES = (ReadMode.DEFAULT, ReadMode.LATEST_ONLY, ReadMode.INCLUDE_MERGED)


def memory(i: int, *, user: str = "alice", app: str = "acme-api", seconds: int | None = None, kind: str = "fact"):
    """Memory `i`: three memories share each second (ties ordered by id), ids not in time order."""
    at = (T0 + timedelta(seconds=i // 3 if seconds is None else seconds)).isoformat()
    record = {
        "id": f"{(i * 7919) % 100_003:08x}-0000-4000-a000-{i:012x}",
        "memory": f"memory number {i} about the {kind} of service {i % 37}",
        "user_id": user,
        "app_id": app,
        "metadata": {"type": kind, "n": i},
        "created_at": at,
        "updated_at": at,
    }
    return memory_from_record(record, default_user=user, default_app=app, now=at)


@pytest.fixture(scope="module")
def loaded(postgres_server, tmp_path_factory):
    """(SQLite store, PostgreSQL URL) with the same memories: alice's project, another project
    of hers, bob's; some merged or superseded. Tests that write use `stores` (a copy each)."""
    items = [memory(i, kind="fact" if i % 4 else "preference") for i in range(N)]
    items += [memory(N + i, app="other", seconds=i * 5) for i in range(300)]
    items += [memory(N + 300 + i, user="bob") for i in range(100)]
    rng = random.Random(3)
    retired = {m.id: rng.choice((MERGED, SUPERSEDED)) for m in rng.sample(items[:N], 260)}
    items = [replace(m, lifecycle_state=retired.get(m.id, ACTIVE)) for m in items]
    path = tmp_path_factory.mktemp("pages") / "memories.sqlite3"
    url = postgres_server.fresh_database()
    for where in (str(path), url):
        with open_store(where) as store, store.write() as writer:
            for m in items:
                writer.put(m)
    return path, url


@pytest.fixture
def stores(loaded, postgres_server, tmp_path):
    """A writable copy of `loaded`: (SQLite store, PostgreSQL store, PostgreSQL URL)."""
    path, url = loaded
    copy = tmp_path / "memories.sqlite3"
    copy.write_bytes(path.read_bytes())
    name = url.partition("?")[0].rpartition("/")[2]
    target = postgres_server.fresh_database()
    postgres_server.drop_database(target)
    postgres_server._admin(f"CREATE DATABASE {target.partition('?')[0].rpartition('/')[2]} TEMPLATE {name}")
    sqlite, postgres = open_store(str(copy)), open_store(target)
    yield sqlite, postgres, target
    sqlite.close()
    postgres.close()


def tally(postgres) -> dict[str, int]:
    """Counts, from now on, of the deep pages the anchored path answered and of those it gave up
    on (answered by LIMIT/OFFSET instead: right, but not what is tested here)."""
    counts = {"anchored": 0, "gave up": 0}
    original = postgres._anchored_page

    def spy(*args):
        found = original(*args)
        counts["anchored" if found is not None else "gave up"] += 1
        return found

    postgres._anchored_page = spy
    return counts


def ids(store, *args, **kwargs) -> tuple[int, list[str]]:
    page = store.page(*args, **kwargs)
    return page.count, [m.id for m in page.results]


def same_pages(sqlite, postgres, numbers, **read) -> None:
    for number in numbers:
        expected = ids(sqlite, "alice", page=number, **read)
        assert ids(postgres, "alice", page=number, **read) == expected, (number, read)


def test_every_page_equals_sqlites_in_every_mode_and_scope(loaded):
    path, url = loaded
    with open_store(str(path)) as sqlite, open_store(url) as postgres:
        used = tally(postgres)
        for mode in MODES:
            for app_id in ("acme-api", None):
                count = sqlite.page("alice", mode=mode, app_id=app_id, page_size=1).count
                same_pages(sqlite, postgres, range(1, count // 100 + 3), mode=mode, app_id=app_id, page_size=100)
        # odd page sizes: pages that start between anchors, and the rows just before and after one
        same_pages(sqlite, postgres, [SHALLOW // 7 + 1, STEP * 3 // 7, 300, 340, 400], page_size=7, app_id="acme-api")
        same_pages(sqlite, postgres, [1, 2, 3, 4, 5], page_size=STEP - 1, app_id="acme-api")
        same_pages(sqlite, postgres, [2, 3], page_size=STEP + 1, app_id="acme-api")
        assert len(postgres.anchors) > 1 and used["anchored"] > 100 and not used["gave up"]


def test_filtered_deep_pages_equal_sqlites(loaded):
    path, url = loaded
    where = compile_filters({"metadata": {"type": "fact"}}, user_id="alice")
    with open_store(str(path)) as sqlite, open_store(url) as postgres:
        used = tally(postgres)
        same_pages(sqlite, postgres, [11, 15, 19, 20], where=where, app_id="acme-api", page_size=100)
        assert used == {"anchored": 4, "gave up": 0}


def test_pages_follow_writes_of_other_connections_between_pages(stores):
    """Pages read, then another connection (another process, another machine) writes, then
    the same pages again: each time as SQLite answers them."""
    sqlite, postgres, url = stores
    numbers = [1, 11, 13, 18, 22, 25, 26, 27]
    read = {"app_id": "acme-api", "page_size": 100}
    used = tally(postgres)
    same_pages(sqlite, postgres, numbers, **read)  # remembered from here
    middle = sqlite.page("alice", page=15, **read).results[50]
    early, early_kept, later = sqlite.page("alice", page=2, **read).results[3:6]
    with open_store(str(sqlite.path)) as other_sqlite, open_store(url) as other_postgres:
        writes = [
            lambda w: w.insert(memory(90_001, seconds=500), actor="other"),  # in the middle, a tie of times
            lambda w: w.delete(w.get("alice", early.id), "other"),
            lambda w: w.change(w.get("alice", middle.id), "SUPERSEDE", "other", lifecycle_state=SUPERSEDED),
            lambda w: w.change(w.get("alice", middle.id), "MERGE", "other", lifecycle_state=MERGED),
            lambda w: w.change(w.get("alice", middle.id), "MOVE", "other", app_id="elsewhere"),
            lambda w: w.insert(memory(90_002, seconds=0), actor="other"),  # before every other
            # the counts as they were, the order not: one memory out early, another in late
            lambda w: (w.delete(w.get("alice", later.id), "other"), w.insert(memory(90_004, seconds=800), actor="o")),
            lambda w: w.change(w.get("alice", early_kept.id), "MOVE", "other", created_at=T0.isoformat()),
        ]
        for write in writes:
            for store in (other_sqlite, other_postgres):
                with store.write() as writer:
                    write(writer)
            for mode in MODES:
                same_pages(sqlite, postgres, numbers, mode=mode, **read)
            same_pages(sqlite, postgres, [12, 28, 29], **{**read, "app_id": None})
    assert used["anchored"] > 100 and not used["gave up"]


def test_pages_in_a_snapshot_and_after_own_writes(stores):
    sqlite, postgres, _ = stores
    read = {"app_id": "acme-api", "page_size": 100}
    with postgres.read_snapshot(), sqlite.read_snapshot():
        same_pages(sqlite, postgres, [12, 20, 26], **read)
    before = sqlite.page("alice", **read).count
    seen = []
    for store in (sqlite, postgres):
        with store.write() as writer:
            writer.insert(memory(90_003, seconds=700), actor="test")
            seen.append([ids(store, "alice", page=n, **read) for n in (20, 21, 24)])  # its own insert too
    assert seen[0] == seen[1] and seen[0][0][0] == before + 1
    same_pages(sqlite, postgres, [12, 20, 24, 26, 27], **read)
