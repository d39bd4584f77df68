"""What README.md and docs/*.md name exists: every `mem0-…` command line they quote parses with
that command's own argparse (its subcommand and every flag), every relative link resolves (and
its #anchor names a heading there), and every section they point at — `(docs/dream.md,
"Synthesis")`, `(README, "Decisions")` — is a heading of that file.

A command line is read from code (inline spans and fenced blocks) where a command's name
begins a line of code or follows a shell's `&&`, `;`, `|`, a path (`.venv/bin/`) or the
launcher (`launch.py `), up to the end of the span or line, a shell separator or a comment
(`#`); brackets around optional parts (`[--json]`) and `...` are dropped. What only looks like
one is output: a name in quotes or brackets (`"source": "mem0-dream"`, `[mem0-dream --auto]`),
followed by a colon (`mem0-dream: not applied — …`), or the `--auto` reminder's text. Only
what argparse cannot place fails a line — an unknown flag, an unknown subcommand, a word where
the command takes none — not a value or positional left out (`mem0-memories get` in a list of
subcommands).

A section is a heading, or a paragraph's bold lead-in (`**The reminder.**`, `- **Ids.**`).
"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest
from command_parsers import parser_of, subcommands
from conftest import ENTRY_POINTS

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]
COMMAND = re.compile(
    r"(?<![\w-])(" + "|".join(re.escape(name) for name in sorted(ENTRY_POINTS, key=len, reverse=True)) + r")(?![\w-])"
)
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
SPAN = re.compile(r"`([^`]+)`")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
SECTION = re.compile(r"\b(README|docs/[\w-]+\.md),\s+\"([^\"]+)\"")
SEPARATORS = ("|", "||", "&&", ";", ">", "2>", "<", "&")
STARTS = re.compile(r"(?:^\s*(?:\$\s+)?|(?:&&|;|\||launch\.py)\s+|/|`)$")  # what may come before a command
BOLD = re.compile(r"^\s*(?:[-*]|\d+\.)?\s*\*\*([^*]+?)\.?\*\*")

# What README.md quotes that does not exist, for its rewrite to fix: while it is there, the
# README's check is an expected failure naming it (anything else it finds fails the test).
README_FAULTS = {
    "mem0-dream runs",  # the runs are listed by mem0-dream --runs
}


def page_id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def code_of(text: str) -> list[str]:
    """The page's code: each line of its fenced blocks, then each inline span of the rest."""
    pieces = [line for block in FENCE.findall(text) for line in block.splitlines()]
    prose = FENCE.sub("", text)
    return pieces + [span.replace("\n", " ") for span in SPAN.findall(prose)]


def command_lines(text: str) -> list[tuple[str, list[str]]]:
    """(command, its arguments) for every command line quoted in `text`."""
    found = []
    for piece in code_of(text):
        for match in COMMAND.finditer(piece):
            before, after = piece[: match.start()], piece[match.end() :]
            if not STARTS.search(before) or after.startswith((":", " detected ")):
                continue  # prose, or output (see the module docstring)
            found.append((match.group(1), _arguments(after.split("`", 1)[0])))
    return found


def _arguments(rest: str) -> list[str]:
    rest = rest.split(" #", 1)[0]
    try:
        tokens = shlex.split(rest, comments=False)
    except ValueError:  # a quoted value that goes on on the next line: one value
        quote = min(i for i in (rest.find("'"), rest.find('"')) if i >= 0)
        tokens = [*shlex.split(rest[:quote]), "VALUE"]
    words: list[str] = []
    for token in tokens:
        if token in SEPARATORS or token.startswith("#"):
            break
        if COMMAND.fullmatch(token):  # a second command on the line: its own check
            break
        token = token.strip("[]()").rstrip(",.:")
        if token and token not in ("...", "…"):
            words.append(token)
    return words


class Refused(Exception):
    pass


def _refuse(message: str):
    raise Refused(message)


def what_is_wrong(name: str, arguments: list[str]) -> str | None:
    """Why `name arguments` is not a command line of `name`, or None (see the module docstring)."""
    parser = parser_of(name)
    commands = subcommands(parser)
    for each in (parser, *commands.values()):
        each.error = _refuse  # type: ignore[method-assign]
    lines = [arguments]
    first = next((i for i, word in enumerate(arguments) if not word.startswith("-")), None)
    if commands and first is not None and "/" in arguments[first]:  # `get/delete/history/restore`
        lines = [arguments[:first] + [sub] + arguments[first + 1 :] for sub in arguments[first].split("/")]
    for line in lines:
        try:
            parser.parse_args(line)
        except Refused as exc:
            message = str(exc)
            if "unrecognized arguments" in message or "invalid choice" in message:
                return message
        except SystemExit:  # --help and the like
            pass
    return None


def test_the_pages_quote_commands():
    """The check below reads what it should: it finds command lines in every page that has one."""
    quoted = {page_id(page): len(command_lines(page.read_text(encoding="utf-8"))) for page in PAGES}
    assert quoted["README.md"] > 20 and quoted["docs/dream.md"] > 10, quoted
    assert what_is_wrong("mem0-dream", ["runs"]) and what_is_wrong("mem0-dream", ["--plan", "--jsn"])
    assert what_is_wrong("mem0-memories", ["get/frobnicate"])
    assert what_is_wrong("mem0-dream", ["--undo"]) is None  # a value left out in prose is no fault


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_quoted_command_line_parses(page):
    wrong, known = [], []
    for name, arguments in command_lines(page.read_text(encoding="utf-8")):
        problem = what_is_wrong(name, arguments)
        line = " ".join([name, *arguments])
        if problem:
            (known if page == README and line in README_FAULTS else wrong).append(f"{line}: {problem}")
    assert not wrong, f"{page_id(page)}:\n" + "\n".join(wrong)
    if known:
        pytest.xfail("README.md quotes commands that do not exist; its rewrite fixes them: " + "; ".join(known))


def headings(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return [line.lstrip("#").strip() for line in text.splitlines() if re.match(r"#{1,6} ", line)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.lower().replace("`", ""))
    return text.replace(" ", "-")


def sections(path: Path) -> list[str]:
    """The file's headings and bold lead-ins."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return headings(path) + [found.group(1) for line in text.splitlines() if (found := BOLD.match(line))]


def names_a_heading(path: Path, section: str) -> bool:
    """`section` is one of the file's sections, or the start of one before its colon ("Step 3"
    for "Step 3: analyse"); backticks and line breaks do not count."""
    wanted = " ".join(section.replace("`", "").split())
    for heading in sections(path):
        plain = heading.replace("`", "")
        if plain == wanted or plain.startswith(wanted + ":"):
            return True
    return False


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_relative_link_and_section_named_exists(page):
    text = page.read_text(encoding="utf-8")
    wrong = []
    for target in LINK.findall(FENCE.sub("", text)):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            wrong.append(f"link {target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in {slug(h) for h in headings(resolved)}:
            wrong.append(f"link {target}: no such heading")
    for file, section in SECTION.findall(text):
        named = README if file == "README" else ROOT / file
        if not named.exists():
            wrong.append(f'({file}, "{section}"): no such file')
        elif not names_a_heading(named, section):
            wrong.append(f'({file}, "{section}"): no such section')
    assert not wrong, f"{page_id(page)}:\n" + "\n".join(wrong)


def test_parser_of_is_each_commands_own():
    assert isinstance(parser_of("mem0-dream"), argparse.ArgumentParser)
    assert {"add", "list", "history", "restore", "export"} <= set(subcommands(parser_of("mem0-memories")))
