"""The argparse parser of each console script, as its `main(argv)` builds it: for the tests that
read what a command accepts (its `--help`, the commands the documentation quotes).

`parser_of(name)` calls the command's `main` with its `parse_args` replaced by one that hands
the parser back instead of parsing: whatever way the command builds its parser, the one it
would parse with is the one returned. Nothing of the command runs past that point.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from unittest import mock

from conftest import entry_point


class _Captured(BaseException):  # a BaseException: no command's error handling catches it
    def __init__(self, parser: argparse.ArgumentParser):
        super().__init__()
        self.parser = parser


def _capture(parser: argparse.ArgumentParser, args=None, namespace=None):
    raise _Captured(parser)


def parser_of(name: str) -> argparse.ArgumentParser:
    """The parser `name`'s `main(argv)` parses its arguments with."""
    with mock.patch.object(argparse.ArgumentParser, "parse_args", _capture):
        try:
            entry_point(name)([])
        except _Captured as captured:
            return captured.parser
    raise AssertionError(f"{name}'s main did not parse its arguments")


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's subcommands by name (empty for a command without any)."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


def options(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string the parser takes (`--help` included)."""
    return {option for action in parser._actions for option in action.option_strings}


def every_parser(name: str) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(`name` or `name sub`, parser) for the command and each of its subcommands."""
    parser = parser_of(name)
    yield name, parser
    for sub, subparser in subcommands(parser).items():
        yield f"{name} {sub}", subparser
