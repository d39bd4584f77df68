"""What the stores' shared SQL says differently on SQLite and on PostgreSQL. Pure."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dialect:
    """One database's words for what the shared SQL needs.

    `same`: equal, or both NULL (SQLite's `IS`; PostgreSQL's `IS NOT DISTINCT FROM`, which
    SQLite reads only from 3.39 on). `hints`: whether the database takes index hints (SQLite's
    `INDEXED BY`: its planner, without statistics, would rather walk a paging index than read
    by key); PostgreSQL has none and needs none."""

    name: str
    same: str
    hints: bool

    def indexed_by(self, index: str) -> str:
        """` INDEXED BY index` where the database takes hints, else nothing."""
        return f" INDEXED BY {index}" if self.hints else ""


SQLITE = Dialect("sqlite", "IS", hints=True)
POSTGRES = Dialect("postgresql", "IS NOT DISTINCT FROM", hints=False)
