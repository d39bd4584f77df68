"""A team on one PostgreSQL database under load (docs/stores.md): MCP servers writing at once
beside dream runs, for a fixed time; errors, lost or dangling memories, and throughput.

    .venv/bin/python benchmarks/postgres_team.py --servers 10 --seconds 60
    MEM0_BENCH_POSTGRES_URL=postgresql://… .venv/bin/python benchmarks/postgres_team.py

Each server is a real `mem0-mcp-server` process driven by the `mcp` client over stdio; it adds
memories (some of them near-duplicates of another server's, so dream has merges to apply)
and searches between adds. Beside them, `mem0-dream --auto` runs in a loop and an
interactive-style `mem0-dream --apply PLAN --yes` runs once the store has grown. At the end:
the tool errors, every memory a server was told it added still present (active, or merged
or pruned by dream with its history), no `replacement_memory_id` pointing nowhere, no dream
run left applying. Without MEM0_BENCH_POSTGRES_URL a throwaway server is started as the
tests start one (tests/pg_server.py).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "tests"))
BIN = Path(sys.executable).parent
NOW = "2026-12-01T00:00:00+00:00"


async def writer(n: int, env: dict, seconds: float, added: list[str], errors: list[str], calls: list[int]) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=str(BIN / "mem0-mcp-server"), args=[], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        deadline, i = time.monotonic() + seconds, 0
        while time.monotonic() < deadline:
            text = f"service {i % 40} of team {n % 3} listens on port {8000 + i % 40}, says note {n}.{i}"
            result = await session.call_tool("add_memory", {"text": text, "metadata": {"type": "environmental"}})
            if result.is_error:
                errors.append(result.content[0].text)
            else:
                added += [r["id"] for r in result.structured_content["results"] if r["event"] == "ADD"]
            calls[0] += 1
            if i % 5 == 0:
                calls[0] += 1
                found = await session.call_tool("search_memories", {"query": f"service {i % 40} port"})
                if found.is_error:
                    errors.append(found.content[0].text)
            i += 1


def dream_loop(env: dict, cwd: Path, seconds: float, errors: list[str]) -> int:
    runs, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        done = subprocess.run(
            [str(BIN / "mem0-dream"), "--auto", "--now", NOW], env=env, cwd=cwd, capture_output=True, text=True
        )
        if done.returncode != 0:
            errors.append(done.stderr.strip())
        runs += 1
    return runs


def interactive_apply(env: dict, cwd: Path, errors: list[str]) -> None:
    plan = cwd / "plan.json"
    for argv in (["--plan", "--json", "-o", str(plan)], ["--apply", str(plan), "--yes"]):
        done = subprocess.run(
            [str(BIN / "mem0-dream"), *argv, "--now", NOW], env=env, cwd=cwd, capture_output=True, text=True
        )
        if done.returncode != 0:
            errors.append(done.stderr.strip())


def check(url: str, added: list[str]) -> dict[str, int]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        present = {r[0] for r in conn.execute("SELECT id FROM memories").fetchall()}
        in_history = {r[0] for r in conn.execute("SELECT DISTINCT memory_id FROM history").fetchall()}
        dangling = conn.execute(
            "SELECT count(*) FROM memories m WHERE replacement_memory_id IS NOT NULL "
            "AND NOT EXISTS (SELECT 1 FROM memories r WHERE r.id = m.replacement_memory_id)"
        ).fetchone()[0]
        applying = conn.execute("SELECT count(*) FROM dream_runs WHERE status = 'applying'").fetchone()[0]
    lost = [i for i in added if i not in present and i not in in_history]
    return {"memories": len(present), "lost": len(lost), "dangling": dangling, "runs_left_applying": applying}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args(argv)
    server, url = None, os.environ.get("MEM0_BENCH_POSTGRES_URL")
    if url is None:
        from pg_server import PostgresServer

        server = PostgresServer.start()
        url = server.fresh_database()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cwd = Path(tmp)
            env = {**os.environ, "MEM0_STORE": url, "MEM0_USER_ID": "team", "MEM0_PROJECT_ID": "acme-api"}
            env.update(MEM0_EMBEDDER="none", MEM0_HOME=str(cwd / "home"), MEM0_DREAM_LOCK=str(cwd / "auto.lock"))
            added: list[str] = []
            errors: list[str] = []
            calls = [0]
            started = time.monotonic()

            autos: dict[str, int] = {}

            async def auto_runs() -> None:
                autos["runs"] = await anyio.to_thread.run_sync(dream_loop, env, cwd, args.seconds, errors)

            async def everything() -> None:
                async with anyio.create_task_group() as group:
                    for n in range(args.servers):
                        group.start_soon(writer, n, env, args.seconds, added, errors, calls)
                    group.start_soon(auto_runs)
                    await anyio.sleep(args.seconds / 2)
                    await anyio.to_thread.run_sync(interactive_apply, env, cwd, errors)

            anyio.run(everything)
            elapsed = time.monotonic() - started
            result = check(url, added)
    finally:
        if server is not None:
            server.stop()
    print(f"{args.servers} MCP servers for {args.seconds:.0f} s beside --auto ({autos['runs']} runs) and one --apply")
    print(
        f"tool calls: {calls[0]} ({calls[0] / elapsed:.1f}/s), of them {len(added)} new memories; errors: {len(errors)}"
    )
    print(", ".join(f"{k}: {v}" for k, v in result.items()))
    for error in errors[:5]:
        print("error:", error[:300])
    return 0 if not errors and result["lost"] == result["dangling"] == result["runs_left_applying"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
