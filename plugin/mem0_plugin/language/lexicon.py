"""The small word lists behind dream's merge and conflict rules (see `dream.analysis`); a module
below the store and dream because the text features (`features`) read them too.

* `WEAK_WORDS` — significant words that add no condition, scope or value to a statement:
  generic nouns for "the thing chosen" (``db``, ``tool``, ``library``, ``project``),
  verbs of choosing, using, running or switching (``prefer``, ``run``, ``switched``),
  and adverbs of currency (``currently``). Two statements whose significant words
  differ only by weak words say the same thing ("Use PostgreSQL for auth" / "Auth DB is
  PostgreSQL"). Words are listed as significant words appear: folded by
  `text.fold_plural` (``nowadays`` is ``nowaday``), irregular forms spelled out.
* `QUALIFIERS` — stop words that restrict when or to what a statement applies (``if``,
  ``only``, ``before``, ``all``). Stop words are not significant, so without this list
  "Run migrations before deploy" and "Run migrations after deploy" would look identical.
* `PREDICATE_FAMILIES` — verbs that set the same single-valued attribute, mapped to one
  canonical form, so "lives in Tokyo" and "moved to Osaka" are seen as one predicate with
  two values. Deliberately short: an unlisted synonym only costs a missed conflict.
* `CATEGORY_NAMES` — words written like names (capitals, acronyms) that name a kind of
  thing rather than one tool: ``API``, ``UI``, ``CI``, ``GPU``, ``OOM``, ``OS``, human
  languages, file formats (``JSON``), HTTP methods, and ordinary words capitalised in a
  product's own vocabulary ("an @Entity", "a Server Action", "String Catalog"). A paraphrase
  adds them freely ("Bottlerocket as the node OS" / "Bottlerocket AMIs"), so they make two
  texts name two different tools only when each names another of one set of alternatives
  (`CATEGORY_ALTERNATIVES`: CPU / GPU, HTTP / HTTPS, server / client, GET / POST, JSON /
  YAML, English / Chinese …; `relation.two_things.tool_swapped`).
* `NAME_ALIASES` — one tool's usual short and long names (``js``/``javascript``,
  ``k8s``/``kubernetes``, ``wasm``/``webassembly``), folded as names are: a text naming one
  mentions the other.
* `EVENT_TYPES` — memory types that record something that happened, not a standing fact;
  two of them never contradict each other ("Fixed crash in Parser" / "... in Lexer").
"""

from __future__ import annotations

WEAK_WORDS = frozenset(
    """
db database datastore tool tooling library lib framework package service platform system solution
option choice setting approach way thing stuff default
project repo repository codebase code team app application
run ran running prefer preferred preferring liked want wanted wish
choose chose chosen choosing pick picked picking go went going opt opted decide decided
switch switched switching migrate migrated migrating adopt adopted adopting stick stuck
employ employed rely relied utilize utilized utilise utilised leverage leveraged
set enable enabled enabling currently today nowaday generally typically normally
""".split()
)

QUALIFIERS = frozenset(
    """
if when whenever unless only except before after during while until once
all any every each some both either few more most above below over under between against
""".split()
)

PREDICATE_FAMILIES: dict[str, frozenset[str]] = {
    "live": frozenset(
        "live lived living reside resided residing based moved move relocated relocate relocating".split()
    ),
    "deploy": frozenset("deploy deployed deploying deployment host hosted hosting".split()),
    "listen": frozenset("listen listened listening serve served serving bind bound".split()),
}

CANONICAL_PREDICATE: dict[str, str] = {
    word: canonical for canonical, family in PREDICATE_FAMILIES.items() for word in family
}

# Topic labels for a predicate whose two memories word it differently ("lives" / "moved").
PREDICATE_LABELS: dict[str, str] = {"live": "lives in", "deploy": "deploys to", "listen": "listens on"}

CATEGORY_NAMES = frozenset(
    """
api ui ux ci cd pr os usb gpu cpu ram vm oom sdk cli ide url uri http https db sql dns tls ssl ip
id uuid utc ami managed
json yaml xml csv html css get put post delete patch server client component asset entity action data core string
key comment catalog location deployment daemon dag
aws gcp azure
english chinese russian japanese german french spanish turkish american
""".split()
)


def _the_others(groups: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Each word of each group (words separated by spaces) → the other words of its group."""
    return {word: frozenset(group.split()) - {word} for group in groups for word in group.split()}


# Kinds of thing that replace one another: "inference runs on the CPU" / "… on the GPU".
_ALTERNATIVE_GROUPS = (
    "cpu gpu",
    "http https",
    "server client",
    "get put post delete patch",
    "json yaml xml csv",
    "aws gcp azure",
    "english chinese russian japanese german french spanish turkish",
)
CATEGORY_ALTERNATIVES = _the_others(_ALTERNATIVE_GROUPS)

_ALIAS_GROUPS = (
    "js javascript",
    "ts typescript",
    "py python",
    "wasm webassembly",
    "k8s kubernete",
    "postgre postgresql pg psql",
    "tf terraform",
    "torch pytorch",
    "gh github",
    "mv3 manifest",
    "mongo mongodb",
    "db database",
    "en english",
    "zh chinese",
    "ru russian",
    "ja japanese",
)
NAME_ALIASES = _the_others(_ALIAS_GROUPS)

EVENT_TYPES = frozenset({"bug_fix", "session_summary", "compact_summary", "auto_capture", "health_check"})

# Function words trimmed from both ends of a conflict topic ("Deploy to" → "Deploy").
TOPIC_EDGE_WORDS = frozenset(
    "a an the to in on at for of with and or by from is are was were be it that this as".split()
)


def canonical(word: str) -> str:
    """The canonical form of a predicate word ("moved" → "live"); other words unchanged."""
    return CANONICAL_PREDICATE.get(word, word)
