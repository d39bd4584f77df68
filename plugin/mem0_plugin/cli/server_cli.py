"""`mem0-server`: the Mem0 platform's REST routes and MCP over streamable HTTP (docs/server.md).

mem0-server                         # 127.0.0.1:8765, keys from $MEM0_HOME/config.yaml
mem0-server --host 0.0.0.0          # refused unless API keys are configured
mem0-server --new-key alice         # print a fresh key and where in config.yaml it goes
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..config_file import CONFIG_NAME, read_config
from ..errors import ConfigError
from ..store_url import check_directory
from .common import Parser, identity_from, run_command

if TYPE_CHECKING:
    import uvicorn

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="mem0-server", description="Mem0 platform REST routes and MCP over HTTP, on your own store.")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free)")
    parser.add_argument(
        "--project-id", help="project of memories added without app_id (default: MEM0_PROJECT_ID, else the directory's)"
    )
    parser.add_argument(
        "--store", help="store URL or file path (default: MEM0_STORE or sqlite:///<MEM0_HOME>/memories.sqlite3)"
    )
    parser.add_argument("--cwd", help=argparse.SUPPRESS)
    parser.add_argument("--new-key", metavar="USER", help="print a fresh API key for USER and exit")
    parser.add_argument("--debug", action="store_true", help="access log and tracebacks on stderr")
    parser.set_defaults(user_id=None)
    return parser


def new_key_lines(user: str, config: Path, has_keys: bool = False) -> str:
    """The key, then where it goes: the whole `server:` block, or only its line when `config`
    already lists keys (a second `server:` block pasted below the first would replace it)."""
    from ..web.config import new_key

    key = new_key()
    item = f'    - {{key: "{key}", users: [{json.dumps(user)}]}}'
    if has_keys:
        return f"{key}\n\n# add this line under server: api_keys: in {config} (beside the keys there):\n{item}\n"
    return f"{key}\n\n# add to {config}:\nserver:\n  api_keys:\n{item}\n"


def _lists_keys(home: Path) -> bool:
    """Whether config.yaml already has a `server:` section with `api_keys` (unreadable: no)."""
    try:
        _, data = read_config(home)
    except ConfigError:
        return False
    section = data.get("server")
    return isinstance(section, dict) and "api_keys" in section


def serve(args: argparse.Namespace) -> int:
    if args.new_key:
        home = identity_from(args).home
        print(new_key_lines(args.new_key, home / CONFIG_NAME, _lists_keys(home)), end="")
        return 0
    prepare(args).run()
    return 0


def prepare(args: argparse.Namespace) -> uvicorn.Server:
    """The server `mem0-server` runs, checked and configured (`ConfigError` before anything binds)."""
    import uvicorn

    from ..web.app import build_app
    from ..web.config import read_server_section

    identity = identity_from(args)
    check_directory(identity.store_location)
    config = read_server_section(identity.home)
    if not config.api_keys:
        if not is_loopback(args.host):
            raise ConfigError(
                f"refusing to listen on {args.host} without API keys: add server.api_keys to "
                f"{identity.home / CONFIG_NAME} (mem0-server --new-key USER prints one)"
            )
        print(
            f"mem0-server: no API keys in {identity.home / CONFIG_NAME}: every request will be refused (401); "
            "mem0-server --new-key USER prints one",
            file=sys.stderr,
        )
    logging.basicConfig(
        stream=sys.stderr, level=logging.DEBUG if args.debug else logging.WARNING, format="mem0-server: %(message)s"
    )
    app = build_app(identity, config, host=args.host)
    print(f"mem0-server: serving {identity.store_url} on http://{args.host}:{args.port}", file=sys.stderr)
    level = "info" if args.debug else "warning"
    return uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, access_log=args.debug, log_level=level))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_command("mem0-server", serve, args)


if __name__ == "__main__":
    sys.exit(main())
