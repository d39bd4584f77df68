"""What every command shares: the identity flags, opening the store, and the one place
where errors become a line on stderr and an exit code.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable
from typing import NoReturn

from ..arguments import Parser
from ..errors import Mem0PluginError
from ..identity import Identity, resolve_identity
from ..sanitize import printable

__all__ = ["Parser", "identity_arguments", "identity_from", "run_command"]

EXIT_INTERRUPTED = 130
EXIT_BUG = 70


def identity_arguments(parser: argparse.ArgumentParser, *, suppress: bool = False) -> None:
    """--user-id, --project-id, --store, --cwd, --debug (docs/commands.md)."""
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument("--user-id", default=default, help="user (default: MEM0_USER_ID, $USER, 'default')")
    parser.add_argument(
        "--project-id", default=default, help="project (default: MEM0_PROJECT_ID, mem0.md, git origin, directory name)"
    )
    parser.add_argument(
        "--store",
        default=default,
        help="store URL or file path (default: MEM0_STORE or sqlite:///<MEM0_HOME>/memories.sqlite3)",
    )
    parser.add_argument("--cwd", default=default, help="project directory (default: the current directory)")
    parser.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS if suppress else False, help="show tracebacks"
    )


def identity_from(args: argparse.Namespace) -> Identity:
    return resolve_identity(user_id=args.user_id, project_id=args.project_id, store=args.store, cwd=args.cwd)


def run_command(prog: str, body: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a command body; anticipated errors → one line on stderr and the error's exit code."""
    try:
        return body(args)
    except Mem0PluginError as exc:
        print(f"{prog}: error: {printable(str(exc))}", file=sys.stderr)  # may echo input: one inert line
        if getattr(args, "debug", False):
            traceback.print_exc()
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:  # a bug: one line unless --debug
        print(
            f"{prog}: internal error: {type(exc).__name__}: {printable(str(exc))} (rerun with --debug for details)",
            file=sys.stderr,
        )
        if getattr(args, "debug", False):
            traceback.print_exc()
        return EXIT_BUG


def exit_without_teardown(code: int) -> NoReturn:
    """End a finished batch command's process at once: flush stdout and stderr, then
    `os._exit(code)`. A normal exit frees every object the run still holds one by one and
    tears each imported module down; after `mem0-dream` has read 10,000-100,000 memories that
    took 0.2 s of a 1.5 s nightly run (docs/dream.md, "`--auto`").
    Nothing is left to do at that point: the store is closed, the locks released, files
    written and closed by their context managers, the child processes joined. Only the
    console script calls it; `main(argv)` returns as before (tests, embedding)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can reach it
            pass
    os._exit(code)
