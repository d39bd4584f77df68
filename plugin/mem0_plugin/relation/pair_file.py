"""The remembered pair decisions of one store, user and project, in a file under
``$MEM0_HOME/dream/pairs/`` (docs/dream.md, "Remembered pairs").

The file is a cache of `pair_memo`, read and written whole each run, so it is binary and
fixed-width (reading 10,000 pairs takes milliseconds; as JSON it took 70 ms):
`MAGIC`, the 32-byte `rules_digest`, then one `RECORD` per pair — its key
(`pair_memo.KEY_BYTES`), the cosine (float64, exact) and one byte coding (relation,
question). The rules digest ties the file to the code that decided: a SHA-256 of the source of
the `language` and `relation` packages and of the few modules beside them that a decision reads
(tests/test_pair_memo.py checks that nothing else is read), so any change to the rules, their word lists or the reading of features makes the
next run decide every pair again. A file that is missing, unreadable, truncated, of other
rules or holding an unknown code is an empty memo. It is written whole to a temporary file and
renamed, so a run killed mid-write leaves the previous file; two runs writing at once leave one
of their files, each valid. `mem0-dream --auto` and interactive runs write it; `--plan` only
reads it.
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
from functools import cache
from pathlib import Path

from ..identity import Identity
from ..private_files import private_folder
from .pair_memo import KEY_BYTES, Entry, PairMemo

RULE_PACKAGES = ("language", "relation")  # every module of these: what a text reads and how two compare
RULE_MODULES = (  # and where a pair's decision is composed, with the plain records the rules read
    "dream/relations.py",
    "errors.py",
    "records.py",
    "sanitize.py",
    "timeutil.py",
)
MAGIC = b"mem0-dream pairs 1\n"
RECORD = struct.Struct(f"<{KEY_BYTES}sdB")  # key, cosine, code
CODES = tuple(
    (relation, question)
    for relation in (None, "merge", "conflict")
    for question in (None, "merge", "conflict", "supersede")
)
CODE_OF = {decision: code for code, decision in enumerate(CODES)}


def rule_sources() -> list[Path]:
    """The source files `rules_digest` covers: `RULE_PACKAGES` whole, then `RULE_MODULES`."""
    package = Path(__file__).resolve().parent.parent
    found = [path for name in RULE_PACKAGES for path in sorted((package / name).glob("*.py"))]
    return found + [package / name for name in RULE_MODULES]


@cache
def rules_digest() -> bytes:
    """SHA-256 of the rule sources, in `rule_sources` order (b"" when one cannot be read: then
    nothing is remembered)."""
    digest = hashlib.sha256()
    for path in rule_sources():
        try:
            digest.update(path.read_bytes())
        except OSError:
            return b""
        digest.update(b"\0")
    return digest.digest()


def memo_path(identity: Identity) -> Path:
    """One file per store, user and project."""
    scope = "\0".join((identity.store_url, identity.user_id, identity.project_id))
    name = hashlib.sha256(scope.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return Path(identity.home) / "dream" / "pairs" / f"{name}.bin"


def read_memo(path: Path) -> PairMemo:
    """The memo kept at `path`, or an empty one (see the module docstring)."""
    rules = rules_digest()
    try:
        data = path.read_bytes()
    except OSError:
        return PairMemo()
    head = len(MAGIC) + len(rules)
    if not rules or data[:head] != MAGIC + rules or (len(data) - head) % RECORD.size:
        return PairMemo()
    known: dict[bytes, Entry] = {}
    for pair_key, cosine, code in RECORD.iter_unpack(memoryview(data)[head:]):
        if code >= len(CODES):
            return PairMemo()
        known[pair_key] = (cosine, *CODES[code])
    return PairMemo(known=known)


def write_memo(path: Path, memo: PairMemo) -> None:
    """Write this run's decisions (`PairMemo.used`) when that is worth it (`PairMemo.changed`).
    Never fails the run: a cache that cannot be written only makes the next run slower."""
    rules = rules_digest()
    if not (rules and memo.changed):
        return
    pack = RECORD.pack
    body = b"".join(
        pack(k, cosine, CODE_OF[relation, question]) for k, (cosine, relation, question) in memo.used.items()
    )
    try:
        private_folder(path.parent)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".pairs-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(MAGIC + rules + body)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError:
        return
