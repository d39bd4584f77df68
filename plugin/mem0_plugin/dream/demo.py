"""`mem0-dream --demo`: a throwaway store filled with the bundled sample project."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path

from ..identity import Identity, default_store_url
from ..records import Memory, new_memory_id
from ..store import Store, open_store
from ..timeutil import format_timestamp

DEMO_USER = "demo-user"


def sample() -> dict:
    return json.loads(resources.files("mem0_plugin").joinpath("data/demo_memories.json").read_text("utf-8"))


def sample_memories(data: dict, now: datetime) -> list[Memory]:
    """The sample with ages turned into timestamps before `now`."""
    memories = []
    for item in data["memories"]:
        stamp = format_timestamp(now - timedelta(days=item["days_ago"], hours=1))
        metadata = {"type": item["type"], "confidence": item["confidence"], "source": "demo"}
        if item.get("pinned"):
            metadata["pinned"] = True
        memories.append(
            Memory(
                id=new_memory_id(),
                memory=item["memory"],
                user_id=DEMO_USER,
                app_id=data["project"],
                metadata=metadata,
                created_at=stamp,
                updated_at=stamp,
                immutable=bool(item.get("immutable")),
            )
        )
    return memories


@contextmanager
def demo_store(now: datetime) -> Iterator[tuple[Identity, Store]]:
    """A store in a temporary directory, removed afterwards; never the user's own."""
    data = sample()
    with tempfile.TemporaryDirectory(prefix="mem0-dream-demo-") as tmp:
        home = Path(tmp)
        # An empty mem0.md: the built-in retention applies even when the temporary
        # directory lies inside some project that has its own mem0.md.
        (home / "mem0.md").write_text("# mem0 dream demo\n", encoding="utf-8")
        identity = Identity(
            user_id=DEMO_USER,
            project_id=data["project"],
            branch="main",
            home=home,
            store_url=default_store_url(home),
            cwd=home,
        )
        with open_store(identity.store_location) as store:
            with store.write() as writer:
                for memory in sample_memories(data, now):
                    writer.insert(memory, actor="demo")
            yield identity, store
