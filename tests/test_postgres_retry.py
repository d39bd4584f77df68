"""Conflicts and lost connections in PostgreSQL write transactions (docs/stores.md,
"Conflicts retried").

The store's writers queue on one advisory lock, so among themselves they never conflict; a
session outside the store (a DBA's psql, a script) can still deadlock with one, or make it
fail to serialize when the database's default isolation level is raised. Both are provoked
here for real against the test server, with the store's transaction as the victim, through
the product's own update path (`operations.update_memory`): the write is run again from the
start and applied exactly once. The retry policy itself is tested with an injected clock.
"""

from __future__ import annotations

import threading
import time
from urllib.parse import quote

import psycopg
import pytest
from mem0_plugin import operations
from mem0_plugin.errors import StoreError, WriteConflictError
from mem0_plugin.identity import resolve_identity
from mem0_plugin.records import Memory
from mem0_plugin.store.postgres.retry import WriteRetry, run_with_retries
from mem0_plugin.store.postgres.store import WRITE_LOCK, PostgresStore

STAMP = "2026-01-01T00:00:00+00:00"


# -- the policy, with an injected clock -----------------------------------------------------


def conflict() -> WriteConflictError:
    error = WriteConflictError("store write failed: deadlock detected")
    error.sqlstate = "40P01"
    return error


def test_conflicts_are_retried_a_bounded_number_of_times_with_jittered_growing_waits():
    waits: list[float] = []
    calls = []

    def attempt():
        calls.append(1)
        if len(calls) < 3:
            raise conflict()
        return "done"

    policy = WriteRetry(attempts=5, base_seconds=0.1, max_seconds=0.25)
    assert run_with_retries(attempt, policy, sleep=waits.append, draw=lambda: 0.5) == "done"
    assert len(calls) == 3 and waits == [0.05, 0.1]
    assert [policy.delay(n, lambda: 0.999) for n in (1, 2, 3, 4)] == pytest.approx([0.0999, 0.1998, 0.24975, 0.24975])

    calls.clear()
    with pytest.raises(WriteConflictError):
        run_with_retries(lambda: calls.append(1) or (_ for _ in ()).throw(conflict()), policy, sleep=waits.append)
    assert len(calls) == 5  # the last conflict is raised


def test_other_errors_are_not_retried():
    calls = []

    def attempt():
        calls.append(1)
        raise StoreError("store write failed: the connection to the database was lost")

    with pytest.raises(StoreError):
        run_with_retries(attempt, WriteRetry(), sleep=lambda _: None)
    assert calls == [1]


# -- real conflicts on the test server -------------------------------------------------------


def with_options(url: str, *settings: str) -> str:
    """`url` whose sessions start with `settings` (libpq's `options`)."""
    return url + ("&" if "?" in url else "?") + "options=" + quote(" ".join(f"-c {s}" for s in settings))


def caller_of(store: PostgresStore, url: str, tmp_path) -> operations.Caller:
    identity = resolve_identity(user_id="alice", project_id="p1", store=url, cwd=str(tmp_path))
    return operations.Caller(store, identity, actor="test")


def seed(store: PostgresStore) -> Memory:
    memory = Memory(id="m-conflict", memory="Deploys go out on Tuesdays", user_id="alice", app_id="p1",
                    created_at=STAMP, updated_at=STAMP)  # fmt: skip
    with store.write() as writer:
        return writer.insert(memory, actor="test")


def wait_until_a_session_waits_for_a_lock(conn: psycopg.Connection, deadline: float = 10.0) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        waiting = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
            " AND wait_event IN ('transactionid', 'tuple')"  # a row lock: not another session's advisory wait
        ).fetchone()[0]
        if waiting:
            return
        time.sleep(0.005)
    raise AssertionError("the store's write never waited for the row lock")


def update_in_thread(caller: operations.Caller) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def run():
        try:
            outcome["result"] = operations.update_memory(caller, "m-conflict", text="Deploys go out on Thursdays")
        except Exception as exc:  # the assertion below shows it
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def assert_applied_once(store: PostgresStore, outcome: dict, sqlstate: str) -> None:
    assert "error" not in outcome, outcome.get("error")
    assert outcome["result"]["memory"] == "Deploys go out on Thursdays"
    assert store.conflicts_retried == [sqlstate]
    events = [entry.event for entry in store.history("alice", "m-conflict")]
    assert events == ["ADD", "UPDATE"]  # one UPDATE: the aborted attempt left nothing
    assert store.get("alice", "m-conflict").version == 2


def test_a_deadlock_victim_update_is_run_again_and_applied_once(postgres_url, tmp_path):
    # PostgreSQL looks for a deadlock once per wait, deadlock_timeout after it began: the store's
    # session must look after the cycle closes (the outside session asks for the lock at once)
    # and before the outside session does (30 s), so that the store's transaction is the victim
    url = with_options(postgres_url, "deadlock_timeout=1s")
    with PostgresStore(url) as store, psycopg.connect(postgres_url) as outside:
        seed(store)
        outside.execute("SET deadlock_timeout = '30s'")
        outside.execute("SELECT 1 FROM memories WHERE id = 'm-conflict' FOR UPDATE")  # holds the row
        thread, outcome = update_in_thread(caller_of(store, url, tmp_path))
        with psycopg.connect(postgres_url, autocommit=True) as observer:
            wait_until_a_session_waits_for_a_lock(observer)  # the store holds the write lock, waits for the row
        outside.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))  # and now the cycle: a deadlock
        outside.commit()
        thread.join(30)
        assert_applied_once(store, outcome, "40P01")


def test_a_serialization_failure_under_a_serializable_default_is_run_again_and_applied_once(postgres_url, tmp_path):
    url = with_options(postgres_url, "default_transaction_isolation=serializable")
    with PostgresStore(url) as store, psycopg.connect(postgres_url) as outside:
        seed(store)
        outside.execute("UPDATE memories SET metadata = metadata WHERE id = 'm-conflict'")  # not committed yet
        thread, outcome = update_in_thread(caller_of(store, url, tmp_path))
        with psycopg.connect(postgres_url, autocommit=True) as observer:
            wait_until_a_session_waits_for_a_lock(observer)  # the store read the row and waits to write it
        outside.commit()  # the row changed after the store's snapshot: it cannot serialize
        thread.join(30)
        assert_applied_once(store, outcome, "40001")


def test_a_connection_lost_in_a_write_is_a_clear_error_and_nothing_is_written(postgres_url):
    with PostgresStore(postgres_url) as store, psycopg.connect(postgres_url, autocommit=True) as admin:
        memory = Memory(id="m-lost", memory="Half a write", user_id="alice", created_at=STAMP, updated_at=STAMP)
        attempts = []

        def work(writer):
            attempts.append(1)
            writer.insert(memory, actor="test")
            pid = writer._execute("SELECT pg_backend_pid()").fetchone()[0]
            admin.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))
            writer.insert(Memory(id="m-lost-2", memory="The other half", user_id="alice",
                                 created_at=STAMP, updated_at=STAMP), actor="test")  # fmt: skip

        with pytest.raises(
            StoreError, match=r"connection to the database was lost .*nothing of this write was applied"
        ):
            store.transact(work)
        assert attempts == [1]  # a lost connection is not a conflict: not run again
        assert store._query("SELECT count(*) FROM memories") == [(0,)]
        assert store._query("SELECT count(*) FROM history") == [(0,)]
        with store.write() as writer:  # the store goes on, on a new connection
            writer.insert(memory, actor="test")
        assert [e.event for e in store.history("alice", "m-lost")] == ["ADD"]
