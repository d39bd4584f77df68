"""Vectors on PostgreSQL: pgvector when the server has it, else ranked in the process
(docs/stores.md, "Vectors").

`detect` decides once, when the store opens: pgvector is used when the `vector` extension is
installed in the database, or available on the server and this user may create it (then it
is created). Its version, or the reason it is not used, is `VectorPath`, which `mem0-health`
shows. With pgvector, each row of `vectors` also holds its vector as an `embedding` column
(`vector`, of any dimension: one column serves every model), written with the row
(`insert_vector`) and filled at open for rows written before or by a process that does not
know the column (`backfill`); a row whose column is still empty is decoded in SQL
(`mem0_half_vector`), slower but never missed.

The nearest in-scope memories are then found by the server: an exact scan ordered by inner
product (`<#>`), no approximate index, so the result is the in-process ranking's. The server
returns a margin of extra candidates with their stored float16 vectors, and the cosines are
computed here with the same arithmetic as the in-process ranking (`vectors.similarities`):
the same scores, the same order, the same ties (by `seq`, the order the vectors were written).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..ranking import Near
from ..rows import SELECT_COLUMNS, row_to_memory
from .migrations import MIGRATE_LOCK

if TYPE_CHECKING:
    import numpy as np


Query = Callable[[str, Sequence[Any]], list[tuple]]

MARGIN = 16  # candidates read beyond `wanted`: the server's float sums and ours may order near-ties apart
BACKFILL_BATCH = 500
# an embedding parameter: the stored float16 values as a list of floats, sent in binary (a
# float8[]: no text to write or parse) and cast exactly (each value fits a real)
EMBEDDING = "%b::real[]::vector"
NOT_INSTALLED = "pgvector not installed on the server"
OFF_ENV = "MEM0_PGVECTOR"  # "off": never use or create pgvector (docs/stores.md, "Vectors")

# A float16 bytea (little-endian, as `vectors.encode_vector` writes it) as a pgvector value,
# exactly (float16 -> float8 -> real is exact). Slow (a set per row): only for rows whose
# `embedding` is still empty. Infinities and NaN (never in an embedding) become 0.
HALF_VECTOR_FUNCTION = """
CREATE OR REPLACE FUNCTION mem0_half_vector(b bytea) RETURNS vector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_agg(CASE WHEN e = 0 THEN m * 5.9604644775390625e-08::float8
                          WHEN e = 31 THEN 0::float8
                          ELSE (1024 + m) * power(2::float8, e - 25) END
                     * (1 - 2 * s) ORDER BY i)::real[]::vector
    FROM (SELECT i, (get_byte(b, 2 * i + 1) << 8) | get_byte(b, 2 * i) AS h
          FROM generate_series(0, length(b) / 2 - 1) i) x,
    LATERAL (SELECT h >> 15 AS s, (h >> 10) & 31 AS e, h & 1023 AS m) y
$$"""


@dataclass(frozen=True)
class VectorPath:
    """How a PostgreSQL store ranks vectors: pgvector (`version`), or in the process (`reason`)."""

    version: str | None = None
    reason: str = NOT_INSTALLED

    @property
    def pgvector(self) -> bool:
        return self.version is not None

    def describe(self) -> str:
        """One line for `mem0-health`."""
        return f"pgvector {self.version}" if self.version else f"ranked in process ({self.reason})"


def detect(conn: Any, *, readonly: bool, turned_off: bool = False) -> VectorPath:
    """Decide the vector path of the database `conn` (autocommit) is connected to, creating
    the extension, the column and its helpers when they are missing and allowed.
    `turned_off` (`MEM0_PGVECTOR=off`): rank in the process, touch nothing."""
    if turned_off:
        return VectorPath(None, f"pgvector turned off by {OFF_ENV}=off")
    version = _installed(conn)
    if version is None:
        if conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone() is None:
            return VectorPath(None, NOT_INSTALLED)
        if readonly:
            return VectorPath(None, "pgvector not enabled in this database: open it once read-write")
        version = _create_extension(conn)
        if version is None:
            return VectorPath(
                None,
                "pgvector is on the server but this user may not enable it: CREATE EXTENSION vector as a superuser",
            )
    if not _has_column(conn):
        if readonly:
            return VectorPath(None, "this database's vectors have no pgvector column yet: open it once read-write")
        _add_column(conn)
    if not readonly:
        backfill(conn)
    return VectorPath(version, "")


def _installed(conn: Any) -> str | None:
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    return None if row is None else str(row[0])


def _create_extension(conn: Any) -> str | None:
    """CREATE EXTENSION vector (under the migration lock: two processes opening at once
    create it once); None if this user may not."""
    import psycopg

    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege:
        return None
    return _installed(conn)


def _has_column(conn: Any) -> bool:
    return (
        conn.execute(
            "SELECT 1 FROM pg_attribute WHERE attrelid = 'vectors'::regclass AND attname = 'embedding' "
            "AND NOT attisdropped"
        ).fetchone()
        is not None
    )


def _add_column(conn: Any) -> None:
    """The `embedding` column (stored in the row: `MAIN`), the decoder of rows without it, and
    an index of those rows."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
        conn.execute("ALTER TABLE vectors ADD COLUMN IF NOT EXISTS embedding vector")
        # kept in the row (the float16 bytea goes to TOAST instead): a scan reads no TOAST, ~3x faster
        conn.execute("ALTER TABLE vectors ALTER COLUMN embedding SET STORAGE MAIN")
        conn.execute(HALF_VECTOR_FUNCTION)
        conn.execute("CREATE INDEX IF NOT EXISTS vectors_unembedded ON vectors (seq) WHERE embedding IS NULL")


def backfill(conn: Any) -> int:
    """Fill the `embedding` of rows that have none, a batch per transaction; rows a writer
    holds are skipped (`SKIP LOCKED`: no wait, no deadlock), left to the next open. Returns
    how many were filled."""
    from ..vectors import decode_matrix

    filled = 0
    while True:
        with conn.transaction():
            rows = conn.execute(
                "SELECT seq, vector FROM vectors WHERE embedding IS NULL ORDER BY seq LIMIT %s FOR UPDATE SKIP LOCKED",
                (BACKFILL_BATCH,),
            ).fetchall()
            rows = [r for r in rows if r[1]]
            if not rows:
                return filled
            matrix = decode_matrix([bytes(r[1]) for r in rows])
            with conn.cursor() as cursor:
                cursor.executemany(
                    f"UPDATE vectors SET embedding = {EMBEDDING} WHERE seq = %s",
                    [(v.tolist(), r[0]) for r, v in zip(rows, matrix)],
                )
            filled += len(rows)


def vector_text(vector: np.ndarray) -> str:
    """pgvector's text form of a vector, exact: each float32 written so that it reads back the same."""
    return "[" + ",".join(repr(x) for x in vector.astype("float32").tolist()) + "]"


def insert_vector(conn: Any, row: tuple[str, str, str, str, bytes]) -> None:
    """The `vectors` row (id, user_id, model, text_hash, float16 bytes) with its `embedding`
    (`Writer._insert_vector` on a pgvector store; `conn`: the transaction's psycopg connection)."""
    from ..vectors import decode_matrix

    conn.execute(
        f"INSERT INTO vectors (id, user_id, model, text_hash, vector, embedding) VALUES (%s, %s, %s, %s, %s, {EMBEDDING})",
        (*row, decode_matrix([row[4]])[0].tolist()),
    )


def known_cosines(query: Query, user_id: str, model: str, vector: np.ndarray, ids: Sequence[str]) -> dict[str, float]:
    """The cosine with `vector` of each of `ids` that has a vector of `model`."""
    from ..vectors import decode_matrix

    if not ids:
        return {}
    rows = query(
        "SELECT id, vector FROM vectors WHERE user_id = ? AND model = ? AND id = ANY(?)", [user_id, model, list(ids)]
    )
    matrix = decode_matrix([bytes(r[1]) for r in rows])
    return {r[0]: float(matrix[i] @ vector) for i, r in enumerate(rows)}


def nearest_in_scope(
    query: Query, user_id: str, model: str, vector: np.ndarray, sql: str, params: list, wanted: int
) -> list[Near]:
    """The `wanted` memories in scope (`sql`) nearest to `vector`, with their cosines, text
    hashes and terms, nearest first: the server's exact scan picks the candidates, they are scored here."""
    from ..vectors import decode_matrix, similarities

    if wanted <= 0:
        return []
    rows = query(
        "WITH near AS (SELECT v.seq AS near_seq, v.id AS near_id, v.vector AS near_vector FROM vectors v "
        "WHERE v.user_id = ? AND v.model = ? AND v.id IN (SELECT id FROM memories WHERE " + sql + ") "
        "ORDER BY coalesce(v.embedding, mem0_half_vector(v.vector)) <#> ?::vector, v.seq LIMIT ?) "
        f"SELECT near_seq, near_vector, {SELECT_COLUMNS}, text_hash, terms FROM near JOIN memories ON id = near_id",
        [user_id, model, *params, vector_text(vector), wanted + MARGIN],
    )
    if not rows:
        return []
    scores = similarities(decode_matrix([bytes(r[1]) for r in rows]), vector)
    order = sorted(range(len(rows)), key=lambda i: (-scores[i], rows[i][0]))[:wanted]
    return [Near(row_to_memory(rows[i][2:]), float(scores[i]), rows[i][-2], rows[i][-1]) for i in order]
