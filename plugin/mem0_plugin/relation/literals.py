"""Two texts' literals compared (docs/dream.md, "What the pair is"). Pure.

A kind both texts hold with different values is a *replaced literal* (a port, version,
number, path, URL or identifier), unless the other text writes the value too (`echoed`: "`mkdocs
build`" / "after mkdocs build"); an identifier each text holds alone makes two things
(`identifier_differs`); a merge keeps every literal (`one_holds_all`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..language.literal_kinds import VALUE_KINDS, kind_of, written
from ..language.reading import CACHED_TEXT_CHARS, Reading, literal_values


def replaced_kinds(a: Reading, b: Reading) -> list[str]:
    """The kinds of literal both texts hold with different values."""
    if (
        a.plain
        and b.plain
        and (a.features.literals == b.features.literals or not a.features.literals or not b.features.literals)
        and not (a.units and b.units)
        and not (a.lettered_versions or b.lettered_versions)
        and not _amounts_compared(a, b)
    ):
        return []  # the same literals, or one side has none: no kind can differ (read no further)
    return [kind for kind in a.kinds.keys() & b.kinds.keys() if _differ(a.kinds[kind], b.kinds[kind], a, b)]


def _amounts_compared(a: Reading, b: Reading) -> bool:
    """One text holds a number with its unit on it and the other may hold that amount written
    otherwise: both hold a length of time, or the unit is thousands ("30s" / "45 seconds",
    "10k" / "20000"). A size beside a bare number is not compared ("128MB" / "Spark 2")."""
    if not (a.units or b.units):
        return False
    return bool(a.durations and b.durations) or any(u.endswith("k") for u in a.units | b.units)


def _differ(values_a: frozenset[str], values_b: frozenset[str], a: Reading, b: Reading) -> bool:
    """Whether two texts hold different values of one kind: a value only one holds as a literal
    counts unless the other text writes it too (`echoed`)."""
    if values_a == values_b:
        return False
    return _holds_unwritten(values_a, values_b, b, a) or _holds_unwritten(values_b, values_a, a, b)


def replaced_both_ways(values_a: frozenset[str], values_b: frozenset[str], a: Reading, b: Reading) -> bool:
    """Each text holds a value of the kind that the other does not write: a value replaced, not
    one added ("at most 300KB" / "one image at most 300KB")."""
    return _holds_unwritten(values_a, values_b, b, a) and _holds_unwritten(values_b, values_a, a, b)


def retired(values_a: frozenset[str], values_b: frozenset[str], a: Reading) -> bool:
    """The newer text holds the older's value of the kind and a new one the older does not
    write: the old value named as what was replaced ("API on port 8000" / "the API now listens
    on 8080 — 8000 clashed with JupyterHub"). Only a change the newer text marks reads so."""
    return bool(values_a & values_b) and _holds_unwritten(values_b, values_a, a)


def _holds_unwritten(
    values: frozenset[str], others: frozenset[str], other: Reading, own: Reading | None = None
) -> bool:
    """Whether one of `values` (of the text `own`, when known) is neither among the other text's
    `others` nor `held` by it. (A loop, not `any()` over a generator: this runs for most
    candidate pairs.)"""
    for value in values:
        if value not in others and not held(value, own, other, others):
            return True
    return False


def _written_otherwise(value: str, others: frozenset[str], own: Reading | None, other: Reading) -> bool:
    """The other text holds `value` written another way: a length of time in another unit, a
    count in thousands, or a value with a placeholder and one filling it. (Each looked for only
    where it can be: most values tried here are plainly different.)"""
    if value[:1].isdigit():
        if own is not None and _same_duration(value, own, other):
            return True
        if _same_count(value, others):
            return True
    return _fits_placeholder(value, others)


def _same_count(value: str, others: frozenset[str]) -> bool:
    """A count written in thousands on one side and plain on the other: "10k hits" / "10000"."""
    if value[-1] != "k" and not any(o[-1:] == "k" for o in others):
        return False
    count = _count(value)
    return count is not None and any(_count(other) == count for other in others if other != value)


def _count(value: str) -> float | None:
    """ "10k" → 10000.0, "10000" → 10000.0; None for anything else."""
    if value.isdigit():
        return float(value)
    if value[:-1] and value[-1] == "k" and value[:-1].replace(".", "", 1).isdigit():
        return float(value[:-1]) * 1000
    return None


def _same_duration(value: str, own: Reading, other: Reading) -> bool:
    """`value` is a length of time in its text that the other text holds in another unit: "TTL
    300 seconds" / "TTL 5 minutes", "AckWait 2m" / "a 2-minute AckWait"."""
    lengths = own.durations.get(value)
    if not lengths:
        return False
    return any(not lengths.isdisjoint(others) for others in other.durations.values())


def _fits_placeholder(value: str, others: frozenset[str]) -> bool:
    """One of the two is written with a placeholder ("*": `features` reads "<lang>", "{lng}" and
    "xxx" so) that the other fills ("locales/*/common.json" / "locales/en/common.json";
    "plantdetail.*" / "plantdetail.waternow"), or is the folder of ("src/commands/*.ts" /
    "src/commands/"). The same value, once in general and once by example or by its place."""
    if "*" not in value and not any("*" in other for other in others):
        return False  # (nearly every value)
    return any(_fills(value, other) or _fills(other, value) for other in others)


def _fills(example: str, general: str) -> bool:
    """`example` is what `general` holds with its placeholders filled, or the folder they stand in.
    A value of more than `MAX_PLACEHOLDERS` or longer than `MAX_FILLED_CHARS` is compared as
    written: matching many placeholders against a long value can take time without bound."""
    if "*" not in general:
        return False
    fixed = general.partition("*")[0]
    if fixed.endswith("/") and example.rstrip("/") == fixed[:-1]:
        return True  # the folder, with or without its closing slash
    if len(example) > MAX_FILLED_CHARS or len(_STAR_RUN.findall(general)) > MAX_PLACEHOLDERS:
        return False
    return _placeholder_pattern(general).fullmatch(example) is not None


MAX_PLACEHOLDERS = 2  # "src/**/*.test.ts", "locales/*/*.json"
MAX_FILLED_CHARS = 200
_STAR_RUN = re.compile(r"\*+")


@lru_cache(maxsize=1024)
def _placeholder_pattern(value: str) -> re.Pattern[str]:
    """`value` as a pattern: "**" any run of characters, "*" any run within one part of a path
    (or none: "*_test.cpp" / "_test.cpp", the suffix written alone); a directory with or without
    its closing slash ("feature/*/di" / "feature/x/di/")."""
    parts = value.rstrip("/").split("**")
    return re.compile(".*".join("[^/]*".join(map(re.escape, part.split("*"))) for part in parts) + "/?")


def echoed(value: str, other: Reading) -> bool:
    """Whether `value` (a literal of one text, as `features` normalised it: lower-cased) is
    written in the other text too, though not as a literal of its own: bare among its words
    ("`mkdocs build`" / "after mkdocs build, …"), or as part of a longer literal ("release.yml"
    / ".github/workflows/release.yml"; "tests/compose.yml" / "`docker compose -f
    tests/compose.yml up`"; a list of words written with slashes, "dev/staging/prod" / "dev,
    staging, prod"; a command as another command of the other text with its words in another
    order, `_command_written`). The same thing written two ways, not a value replaced. Never
    inside a longer name or number: "80" is not echoed by "8080", "3.11" not by "3.11.2",
    "app" not by "app-server" or "app/api"."""
    text = other.lowered
    if written(value, text, qualified="." in value and kind_of(value) == "dotted"):
        return True
    if "/" in value and _WORD_LIST.fullmatch(value) and all(written(word, text) for word in value.split("/")):
        return True  # "dev/staging/prod" / "dev, staging, prod": words, not a path
    if value.startswith("./") and "/" not in value[2:] and len(value) > 4 and written(value[2:], text):
        return True  # a program in the current folder by its name: "./mvnw" / "mvnw"
    if _module_written(value, other):
        return True  # a Python module by its file: "orders.services" / "orders/services.py"
    if _spelled_in_words(value, text):
        return True  # "@crxjs/vite-plugin" / "the CRXJS Vite plugin"
    if value in _NUMBER_WORDS and re.search(rf"\b{_NUMBER_WORDS[value]}\b", text):
        return True  # "3 new unit tests" / "three new unit tests"
    head, dot, last = value.rpartition(".")  # a module's member by its own name: "Murmur.Repo" / "Repo"
    if dot and head and len(last) >= 3 and last.isalpha() and last not in _EXTENSIONS and written(last, text, True):
        return True
    if dot and "." not in head and _member_written(head, last, text):
        return True  # a class's method by the two names: "`LightningModule.__init__`" / "LightningModule 的 __init__"
    return " " in value and any(_command_written(value, command) for command in other.kinds.get("code", ()))


def _module_written(value: str, other: Reading) -> bool:
    """A Python module's dotted name and its file, one written in each text."""
    if value.endswith(".py") and "/" in value:
        module = value[:-3].strip("./").replace("/", ".")
        return "." in module and written(module, other.lowered, True)
    if "." in value and "/" not in value and kind_of(value) == "dotted" and value.rpartition(".")[2] not in _EXTENSIONS:
        return value.replace(".", "/") + ".py" in other.kinds.get("path", ())
    return False


def _member_written(owner: str, member: str, text: str) -> bool:
    """Both names of `owner.member` written in the text, the member a code name (a dunder or
    snake_case: not a file's extension nor a plain word, "config.yaml" / "the config is YAML")."""
    return "_" in member and len(owner) >= 3 and written(owner, text) and written(member, text)


_NAME_PART = re.compile(r"[a-z][a-z0-9]*|[0-9]+")


def _spelled_in_words(value: str, text: str) -> bool:
    """A name of two or more parts joined by "-", "_", "/" or "@" written as those words in a row
    in the text ("@crxjs/vite-plugin" / "CRXJS Vite plugin"; "react-native-mmkv" / "React Native
    MMKV"). Not a number, version, URL or file name: "3.11", "config.yaml" are written as they are."""
    if "." in value or ":" in value or not any(join in value for join in "-_/@"):
        return False
    parts = _NAME_PART.findall(value)
    if len(parts) < 2 or not parts[0][0].isalpha() or not all(part in text for part in parts):
        return False  # (a quick look first: most names are not in the other text at all)
    return f" {' '.join(parts)} " in _word_run(text)


_RUN_BREAK = re.compile(r"[^a-z0-9\s-]+")  # what ends a run of words: any mark but a space or a hyphen


def _word_run(text: str) -> str:
    """The text's words and numbers one space apart, its runs of words parted by " | ": "the CRXJS
    Vite plugin. Plasmo" → " the crxjs vite plugin | plasmo " (the text is lower-cased already)."""
    return _cached_run(text) if len(text) <= CACHED_TEXT_CHARS else _run_of(text)


@lru_cache(maxsize=4096)
def _cached_run(text: str) -> str:
    return _run_of(text)


def _run_of(text: str) -> str:
    return f" {' | '.join(' '.join(_NAME_PART.findall(piece)) for piece in _RUN_BREAK.split(text))} "


_WORD_LIST = re.compile(r"[a-z]+[0-9.]*(?:/[a-z]+[0-9.]*)+")  # "dev/staging/prod", "ios/android", "p50/p99/p99.9"


# Words that run a program rather than name it: "php artisan migrate" is "artisan migrate".
_RUNNERS = frozenset("php python python3 node npx bunx bundle exec uv run poetry pipenv sudo".split())


def _command_written(command: str, other: str) -> bool:
    """Every word of a command written in the other command, in any order, its program by its
    file name: "`dagster asset materialize --select x -m y`" / "`… -m y --select x`";
    "`./vendor/bin/sail up -d`" / "`sail up -d`"; "`php artisan migrate:fresh`" / "`artisan
    migrate:fresh`". The same command, not one replaced."""
    program, *arguments = command.split()
    words = [word for word in (program.rpartition("/")[2], *arguments) if word not in _RUNNERS]
    return len(words) >= 2 and all(written(word, other) for word in words)


_NUMBER_WORDS = dict(
    zip("2 3 4 5 6 7 8 9 10 11 12".split(), "two three four five six seven eight nine ten eleven twelve".split())
)
# File name endings: "config.yaml" is not echoed by "yaml".
_EXTENSIONS = frozenset(
    "yaml yml json toml lock txt csv cfg ini env conf md rst html css scss py pyi rs go ts tsx js jsx mjs "
    "java kt swift rb php sh bash zsh tf tfvars hcl sql ex exs erl dart proto xml gradle plist "
    "log pid sock tmp bak sqlite pem crt key zip tar tgz png jpg jpeg svg pdf wasm vsix apk aab ipa dmg msi "
    "vue svelte cpp hpp asset prefab unity".split()
)


def identifier_differs(replaced: list[str], a: Reading, b: Reading) -> bool:
    """An identifier (a code name, a flag) differs between the texts: each holds one of a kind
    the other does not write, two things. One text adding a name to the other's is detail
    ("Cart state lives in a Pinia store (useCartStore) …" / "Cart = Pinia store …"; "Don't use
    X in tests; use the Y fixture" / "Tests run with X=True")."""
    return any(
        replaced_both_ways(a.kinds[kind], b.kinds[kind], a, b) or _extended(a.kinds[kind], b.kinds[kind])
        for kind in replaced
        if kind not in VALUE_KINDS
    )


def _extended(values_a: frozenset[str], values_b: frozenset[str]) -> bool:
    """One text's identifier continues one of the other's: another thing of that name
    ("com.example.app" / "com.example.app.widget"; "billing_api" / "billing_api_v2")."""
    only_a, only_b = values_a - values_b, values_b - values_a
    return any(
        longer.startswith(shorter) and longer[len(shorter) : len(shorter) + 1] in _NAME_JOINS
        for shorter, longer in (
            *((x, y) for x in values_a for y in only_b),
            *((y, x) for y in values_b for x in only_a),
        )
    )


_NAME_JOINS = frozenset("._-:/")


def one_holds_all(a: Reading, b: Reading) -> bool:
    """One text holds every literal of the other (so the draft can keep them all)."""
    literals_a, literals_b = literal_values(a), literal_values(b)
    if literals_a <= literals_b or literals_b <= literals_a:
        return True
    return all(held(v, a, b, literals_b) for v in literals_a - literals_b) or all(
        held(v, b, a, literals_a) for v in literals_b - literals_a
    )


def held(value: str, own: Reading | None, other: Reading, others: frozenset[str]) -> bool:
    """The other text (its literals of the kind: `others`) holds `value` of the text `own` too:
    written (`echoed`), or written another way (`_written_otherwise`: a length of time only when
    `own` is known)."""
    return echoed(value, other) or _written_otherwise(value, others, own, other)
