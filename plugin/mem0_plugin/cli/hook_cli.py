"""`mem0-hook`: answer one hook call in this process, or run the recall service (docs/hooks.md).

    mem0-hook CLIENT EVENT [--budget SECONDS]     # the payload on standard input
    mem0-hook --serve SOCKET [--cwd DIR]           # the recall service (scripts/hook.py starts it)

Agents do not call this directly: their hooks run `scripts/hook.py`, which talks to the recall
service and falls back to this. It always exits 0 and prints only the reply the client reads; a
failure is one line in `$MEM0_HOME/hooks.log`. With `--budget`, a call not answered in time
prints nothing (a store write it was doing is rolled back, never half done).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path

MAX_PAYLOAD = 16 * 1024 * 1024


def _parser() -> argparse.ArgumentParser:
    from ..arguments import Parser

    parser = Parser(prog="mem0-hook", description="Answer one agent hook call, or run the recall service.")
    parser.add_argument("client", nargs="?", help="claude, codex or cursor")
    parser.add_argument("event", nargs="?", help="the hook event, as the client names it (SessionStart, …)")
    parser.add_argument("--budget", type=float, default=None, help="seconds to answer within (default: no limit)")
    parser.add_argument("--serve", metavar="SOCKET", help="run the recall service on this Unix socket")
    parser.add_argument("--cwd", help="with --serve: the project whose store is opened first")
    return parser


def _payload(stdin) -> object:
    data = stdin.buffer.read(MAX_PAYLOAD + 1) if hasattr(stdin, "buffer") else stdin.read().encode("utf-8")
    if len(data) > MAX_PAYLOAD:
        raise ValueError("the hook payload is larger than 16 MB")
    return json.loads(data.decode("utf-8", errors="replace"))


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    home = os.environ.get("MEM0_HOME") or str(Path.home() / ".mem0")
    if args.serve:
        return _serve(Path(args.serve), args.cwd or os.getcwd(), home)
    from ..hooks.log import write_line

    try:
        payload = _payload(sys.stdin)
    except (ValueError, OSError) as exc:
        write_line(home, f"{args.client} {args.event}", f"unreadable payload: {exc}")
        return 0
    if not args.client or not args.event:
        write_line(home, "mem0-hook", "usage: mem0-hook CLIENT EVENT (the payload on standard input)")
        return 0
    out = _answer(args.client, args.event, payload, args.budget, home)
    if out:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    return 0


def _answer(client: str, event: str, payload: object, budget: float | None, home: str) -> str:
    from ..hooks.dispatch import Hooks
    from ..hooks.log import write_line

    result: list[str] = []
    hooks = Hooks()

    def run() -> None:
        result.append(hooks.answer(client, event, payload))

    worker = threading.Thread(target=run, name="mem0-hook", daemon=True)
    worker.start()
    worker.join(budget)
    if worker.is_alive():
        write_line(home, f"{client} {event}", f"no answer within {budget:g} s; nothing added")
        sys.stdout.flush()
        os._exit(0)  # the unfinished call's transaction is rolled back with the process
    hooks.close()
    return result[0] if result else ""


def _load_model(home: Path):
    """Start loading `home`'s embedder (and run it once) on a thread; the function returned waits
    for it. The recall service does this first: the model loads while the rest is imported."""
    box: dict = {}

    def load() -> None:
        from ..semantic import Semantic

        semantic = Semantic.from_home(home, quiet=True)
        if semantic.available():
            semantic.embed(["warm up the model"])
        box["semantic"] = semantic

    thread = threading.Thread(target=load, name="mem0-model-load", daemon=True)
    thread.start()

    def loading():
        thread.join()
        if "semantic" not in box:  # the load failed: the service makes its own, which says why
            from ..semantic import Semantic

            return Semantic.from_home(home, quiet=True)
        return box["semantic"]

    return loading


def _serve(path: Path, cwd: str, home: str) -> int:
    model_home = Path(home).expanduser().absolute()  # as `identity.resolve_identity` makes it
    loading = _load_model(model_home)
    from ..hooks.log import write_line
    from ..hooks.service import serve
    from ..hooks.settings import hook_settings

    try:
        idle = hook_settings(home, os.environ).idle_seconds
    except Exception as exc:
        write_line(home, "service", f"{type(exc).__name__}: {exc}")
        idle = 600.0
    try:
        return serve(path, cwd=cwd, idle_seconds=idle, loading=(model_home, loading))
    except Exception as exc:
        write_line(home, "service", f"{type(exc).__name__}: {exc}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
