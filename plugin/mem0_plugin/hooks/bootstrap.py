"""The project's instruction files as memories (docs/hooks.md, "Project files"): `CLAUDE.md`,
`AGENTS.md` and `.cursorrules` at the project root, each section one `project_profile` memory.

At session start each file present is compared with what was imported of it before (its
SHA-256 on every imported section): unchanged, nothing is written; changed, each section
whose text changed is added and supersedes the section it replaces (the same heading, else
the file's first section), and sections that are gone are superseded by the new first one.
`chunks` is pure; `import_files` reads the files and writes.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .. import operations
from ..records import Memory

if TYPE_CHECKING:
    from ..store.base import Writer

BOOTSTRAP_SOURCE = "mem0-bootstrap"
FILES = ("CLAUDE.md", "AGENTS.md", ".cursorrules")
MAX_FILE_BYTES = 256 * 1024  # the rest of a longer file is not imported
CHUNK_CHARS = 1200
MIN_CHUNK_CHARS = 40
MAX_CHUNKS = 60
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


@dataclass(frozen=True)
class Chunk:
    section: str  # the heading path ("Testing > Fixtures"), "" before the first heading
    text: str  # what is stored: "<file> > <section>: <body>"


def _split(body: str, limit: int) -> list[str]:
    """`body` in pieces of at most `limit` characters, cut between paragraphs, else lines."""
    pieces: list[str] = []
    current = ""
    for block in re.split(r"\n\s*\n", body):
        block = block.strip()
        while len(block) > limit:  # one paragraph longer than a piece: cut at a line, else hard
            cut = block.rfind("\n", 0, limit)
            cut = cut if cut > limit // 2 else limit
            pieces.append(block[:cut].strip())
            block = block[cut:].strip()
        if current and len(current) + 2 + len(block) > limit:
            pieces.append(current)
            current = ""
        current = f"{current}\n\n{block}" if current else block
    if current:
        pieces.append(current)
    return [piece for piece in pieces if piece]


def chunks(name: str, content: str) -> list[Chunk]:
    """The file's sections as chunks, in order: each heading's body (short ones joined to the
    next), cut to `CHUNK_CHARS`; at most `MAX_CHUNKS`."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    path: list[str] = []
    fenced = False
    for line in content.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match:
            depth = len(match.group(1))
            path = [*path[: depth - 1], match.group(2)]
            sections.append((" > ".join(path), []))
        else:
            sections[-1][1].append(line)
    found: list[Chunk] = []
    carried = ""
    for section, lines in sections:
        body = (carried + "\n\n" + "\n".join(lines)).strip() if carried else "\n".join(lines).strip()
        if len(body) < MIN_CHUNK_CHARS:
            carried = f"{carried}\n{section}: {body}".strip() if body else carried
            continue
        carried = ""
        label = f"{name} > {section}" if section else name
        for index, piece in enumerate(_split(body, CHUNK_CHARS)):
            key = section if index == 0 else f"{section} ({index + 1})"
            found.append(Chunk(key, f"{label}: {piece}"))
    if carried and found:
        last = found[-1]
        found[-1] = Chunk(last.section, f"{last.text}\n{carried}")
    elif carried:
        found.append(Chunk("", f"{name}: {carried}"))
    return found[:MAX_CHUNKS]


def project_root(cwd: Path) -> Path:
    """The nearest folder at or above `cwd` that holds `.git`, else `cwd`."""
    for folder in (cwd, *cwd.parents):
        if (folder / ".git").exists():
            return folder
    return cwd


def _read(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace")


def import_files(caller: operations.Caller) -> list[str]:
    """Import the project's instruction files that are new or changed; the names imported."""
    root = project_root(caller.identity.cwd)
    imported = []
    for name in FILES:
        path = root / name
        if not path.is_file():
            continue
        content = _read(path)
        if content is None or not content.strip():
            continue
        if _import_file(caller, name, content):
            imported.append(name)
    return imported


def _import_file(caller: operations.Caller, name: str, content: str) -> bool:
    """Import one file's changed sections; False when it is unchanged since its last import."""
    digest = hashlib.sha256(content.encode("utf-8")).hexdigest()
    identity = caller.identity
    earlier = [
        memory
        for memory in caller.store.transact(
            lambda writer: writer.active_by_source(identity.user_id, identity.project_id, BOOTSTRAP_SOURCE)
        )
        if memory.metadata.get("file") == name
    ]
    if earlier and all(memory.metadata.get("file_sha256") == digest for memory in earlier):
        return False
    pieces = chunks(name, content)
    unchanged = {memory.memory: memory for memory in earlier}
    texts = {piece.text for piece in pieces}
    left = {memory.id: memory for memory in earlier}  # not yet kept or replaced
    first: str | None = None
    for piece in pieces:
        metadata: dict[str, object] = {"type": "project_profile", "source": BOOTSTRAP_SOURCE, "file": name}
        metadata |= {"section": piece.section, "file_sha256": digest, "confidence": 1.0}
        same = unchanged.get(piece.text)
        if same is not None and same.id in left:  # this section did not change: it belongs to this version
            del left[same.id]
            operations.update_memory(caller, same.id, metadata=metadata)
            first = first or same.id
            continue
        replaced = [m for m in left.values() if m.metadata.get("section") == piece.section and m.memory not in texts]
        for memory in replaced[:1]:
            del left[memory.id]
        answer = operations.add_superseding(caller, piece.text, metadata, _given(replaced[:1]))
        first = first or answer["results"][0]["id"]
    if left and first is not None:  # sections that are gone: replaced by the file's first
        operations.supersede(caller, first, list(left.values()))
    return True


def _given(memories: list[Memory]):
    """What `add_superseding` is to supersede: `memories` (it skips any changed since read)."""

    def superseded(writer: Writer) -> list[Memory]:
        return memories

    return superseded
