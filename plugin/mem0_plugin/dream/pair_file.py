"""The remembered pair decisions of one store, user and project, in a file under
``$MEM0_HOME/dream/pairs/`` (docs/dream.md, "Remembered pairs").

The file is a cache of `pair_memo`, read and written whole each run, so it is binary and
fixed-width (reading 10,000 pairs takes milliseconds; as JSON it took 70 ms):
`MAGIC`, the 32-byte `rules_digest`, then one `RECORD` per pair — its key
(`pair_memo.KEY_BYTES`), the cosine (float64, exact) and one byte coding (relation,
question). The rules digest ties the file to the code that decided: a SHA-256 of the source of
every module `meaning.relation` reads (tests/test_pair_memo.py checks that `RULE_MODULES` is
complete), so any change to the rules, their word lists or the reading of features makes the
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
import sys
import tempfile
from functools import cache
from pathlib import Path

from ..identity import Identity
from ..private_files import private_folder
from .pair_memo import KEY_BYTES, Entry, PairMemo

RULE_MODULES = (  # where a pair's decision is made (`relations._decision`) and all that `meaning` reads
    "mem0_plugin.dream.relations",
    "mem0_plugin.dream.meaning",
    "mem0_plugin.dream.conditions",
    "mem0_plugin.dream.literals",
    "mem0_plugin.dream.literal_kinds",
    "mem0_plugin.dream.negation",
    "mem0_plugin.dream.polarity",
    "mem0_plugin.dream.reading",
    "mem0_plugin.dream.two_things",
    "mem0_plugin.dream.guards",
    "mem0_plugin.dream.agreement",
    "mem0_plugin.dream.analysed",
    "mem0_plugin.features",
    "mem0_plugin.lexicon",
    "mem0_plugin.text",
    "mem0_plugin.timeutil",
    "mem0_plugin.records",
    "mem0_plugin.errors",
    "mem0_plugin.sanitize",
)
MAGIC = b"mem0-dream pairs 1\n"
RECORD = struct.Struct(f"<{KEY_BYTES}sdB")  # key, cosine, code
CODES = tuple(
    (relation, question)
    for relation in (None, "merge", "conflict")
    for question in (None, "merge", "conflict", "supersede")
)
CODE_OF = {decision: code for code, decision in enumerate(CODES)}


@cache
def rules_digest() -> bytes:
    """SHA-256 of the rule modules' source, in `RULE_MODULES` order (b"" when one cannot be
    read: then nothing is remembered)."""
    digest = hashlib.sha256()
    for name in RULE_MODULES:
        __import__(name)
        source = getattr(sys.modules[name], "__file__", None)
        try:
            digest.update(Path(source).read_bytes() if source else b"")
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
