"""The argument parser every command and the MCP server share: a usage error is one line."""

from __future__ import annotations

import argparse


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (docs/safety.md), then exit 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")
