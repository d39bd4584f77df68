"""Dream step 3 (docs/dream.md): the pure analysis — merges, conflicts, prunes, precedence, scale."""

from __future__ import annotations

import gc
import random
from datetime import datetime, timedelta, timezone
from itertools import combinations

import pytest
from mem0_plugin.dream.analysis import analyse
from mem0_plugin.dream.merging import MAX_VARIANTS
from mem0_plugin.dream.plan import ConflictAction, MergeAction, PruneAction, plan_to_json
from mem0_plugin.dream.retention import DEFAULT_POLICY, choose_policy
from mem0_plugin.errors import InvalidInputError
from mem0_plugin.language.features import text_features
from mem0_plugin.language.lexicon import CANONICAL_PREDICATE, WEAK_WORDS
from mem0_plugin.language.text import STOP_WORDS, fold_plural, jaccard, significant_words
from mem0_plugin.records import Memory
from mem0_plugin.relation.candidates import similar_pairs
from mem0_plugin.relation.word_merge import mergeable

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
MISSING = object()


def mem(
    memory_id: str,
    text: str,
    *,
    type: str | None = "decision",
    age: float = 1,
    created: str | None = None,
    confidence: object = MISSING,
    state: str = "active",
    immutable: bool = False,
    version: int = 1,
    **metadata: object,
) -> Memory:
    """A memory `age` days old (or with the given raw `created` text) of the given type."""
    meta: dict[str, object] = dict(metadata)
    if type is not None:
        meta["type"] = type
    if confidence is not MISSING:
        meta["confidence"] = confidence
    stamp = created if created is not None else (NOW - timedelta(days=age)).isoformat()
    return Memory(
        id=memory_id,
        memory=text,
        user_id="alice",
        app_id="acme-api",
        metadata=meta,
        created_at=stamp,
        updated_at=stamp,
        lifecycle_state=state,
        immutable=immutable,
        version=version,
    )


def run(memories, policy=None):
    return analyse(
        memories,
        DEFAULT_POLICY if policy is None else policy,
        NOW,
        user_id="alice",
        project_id="acme-api",
        policy_source="default",
    )


def relation(text_a: str, text_b: str, type: str = "decision") -> str:
    """What dream proposes for two memories: 'merge', 'supersede', 'conflict' or 'nothing' (A older than B)."""
    plan = run([mem("a", text_a, type=type, age=10), mem("b", text_b, type=type, age=2)])
    assert not plan.prunes
    if plan.merges:
        return "merge"
    if plan.supersedes:
        return "supersede"
    return "conflict" if plan.conflicts else "nothing"


# --- merge vs conflict vs nothing --------------------------------------------------------

PAIRS = [
    # the seeds' examples
    ("prefers window seats", "always books window seats on long-haul flights", "nothing"),
    ("lives in Tokyo", "moved to Osaka", "supersede"),
    ("Use PostgreSQL for auth", "Auth DB is PostgreSQL", "merge"),
    ("Deploy to ECS", "Deploy to Vercel", "conflict"),
    ("Use Redis", "Don't use Redis", "conflict"),
    # same fact, other words
    ("Run tests with pytest -q", "Tests are run with pytest -q", "merge"),
    ("Use tabs for indentation", "Tabs are used for indentation", "merge"),
    ("use postgresql for auth", "Use PostgreSQL for auth", "merge"),
    ("Never commit directly to main", "Don't commit directly to main", "merge"),
    ("Set the request timeout to 30 seconds", "The request timeout is 30 seconds", "merge"),
    ("Deploy to ECS", "Deploy to ECS", "merge"),
    # different value on the same predicate
    ("API listens on port 8080", "API listens on port 3000", "conflict"),
    ("Project uses Python v2", "Project uses Python v3", "conflict"),
    ("Node 18 is required", "Node 20 is required", "conflict"),
    ("Use PostgreSQL for auth", "Use MySQL for auth", "conflict"),
    ("Config lives in src/app/config.py", "Config lives in src/core/config.py", "conflict"),
    ("Run tests with pytest -q", "Run tests with pytest -x", "conflict"),
    ("Docs are at https://docs.acme.dev/v1", "Docs are at https://docs.acme.dev/v2", "conflict"),
    ("Deploy on Fridays", "Never deploy on Fridays", "conflict"),
    # a condition, scope or detail the other lacks; unrelated; in doubt
    ("Books window seats", "Books window seats on flights", "nothing"),
    ("Run migrations before deploy", "Run migrations after deploy", "nothing"),
    ("Project uses Python", "Project uses Python 3.11", "nothing"),
    ("Auth DB is PostgreSQL", "Main DB is PostgreSQL", "nothing"),
    ("Use Redis", "Use Memcached", "nothing"),
    ("Use Redis for caching", "Use Postgres for sessions", "nothing"),
    ("Run unit tests with pytest", "Run integration tests with pytest", "nothing"),
    ("Prefer small pull requests", "Write docstrings for public functions", "nothing"),
    ("Deploy to ECS", "Deploy API to ECS", "nothing"),
]


@pytest.mark.parametrize(("text_a", "text_b", "expected"), PAIRS)
def test_merge_conflict_or_nothing(text_a, text_b, expected):
    assert relation(text_a, text_b) == expected
    # the rule is symmetric; but reversed, a supersede's mark is on the older text: a conflict
    assert relation(text_b, text_a) == ("conflict" if expected == "supersede" else expected)
    assert mergeable(text_features(text_a), text_features(text_b)) is (expected == "merge")


def test_lexicon_words_are_spelled_as_significant_words_are():
    listed = WEAK_WORDS | frozenset(CANONICAL_PREDICATE)
    assert all(fold_plural(word) == word and word not in STOP_WORDS for word in listed)


@pytest.mark.parametrize(
    ("text_a", "text_b"), [("Deploy to ECS", "Deploy to Vercel"), ("Use Redis", "Don't use Redis")]
)
def test_event_types_never_conflict(text_a, text_b):
    assert relation(text_a, text_b, type="bug_fix") == "nothing"
    assert relation(text_a, text_b, type="unknown") == "conflict"


@pytest.mark.parametrize(
    ("older", "newer", "topic"),
    [
        ("Deploy to ECS", "Deploy to Vercel", "Deploy"),
        ("API listens on port 8080", "API listens on port 3000", "API listens on port"),
        ("Use Redis", "Don't use Redis", "use Redis"),
        ("Project uses Python v2", "Project uses Python v3", "Project uses Python"),
        ("moved to Osaka", "lives in Tokyo", "lives in"),  # the mark of change is on the older one
    ],
)
def test_conflict_lists_the_newer_memory_as_a_with_a_topic(older, newer, topic):
    plan = run([mem("old", older, age=120), mem("new", newer, age=3)])
    assert plan.conflicts == (
        ConflictAction(ids=("new", "old"), type="decision", topic=topic, likely_winner="new", texts=(newer, older)),
    )
    assert plan.supersedes == ()


@pytest.mark.parametrize(
    ("conf_x", "conf_y", "winner"), [(0.9, 0.5, "x"), (0.5, 0.9, "y"), (None, 0.4, "y"), (0.7, 0.7, "x")]
)
def test_conflict_winner_on_equal_time_is_the_more_confident_then_the_smaller_id(conf_x, conf_y, winner):
    plan = run(
        [mem("x", "Deploy to ECS", age=5, confidence=conf_x), mem("y", "Deploy to Vercel", age=5, confidence=conf_y)]
    )
    assert plan.conflicts[0].likely_winner == winner == plan.conflicts[0].ids[0]


def test_unparseable_created_at_loses_a_conflict():
    plan = run([mem("x", "Deploy to ECS", created="not a date"), mem("y", "Deploy to Vercel", age=400)])
    assert plan.conflicts[0].ids == ("y", "x")


def test_a_predicate_with_many_values_is_a_list_not_a_conflict():
    hosts = ["ECS", "Vercel", "Fly", "Render", "Heroku", "Netlify"]
    assert not run([mem(f"m{i}", f"Deploy to {h}", age=i + 1) for i, h in enumerate(hosts)]).conflicts
    plan = run([mem(f"m{i}", f"Deploy to {h}", age=i + 1) for i, h in enumerate(hosts[:3])])
    assert [c.ids for c in plan.conflicts] == [("m0", "m1")]  # the two newest; m2 waits for the next run


# --- merges -------------------------------------------------------------------------------


def test_merge_action_fields():
    plan = run(
        [
            mem("a", "Use PostgreSQL for auth", age=9, confidence=0.6),
            mem("b", "Auth DB is PostgreSQL", age=4, confidence=0.8),
        ]
    )
    assert plan.merges == (
        MergeAction(
            ids=("a", "b"), type="decision", merged_text="Auth DB is PostgreSQL", confidence=0.8, similarity=0.67
        ),
    )


@pytest.mark.parametrize(
    ("confidences", "expected"),
    [((None, None), None), ((0.4, None), 0.4), ((0.2, 0.9), 0.9), (("high", 0.5), 0.5), ((True, None), None)],
)
def test_merge_confidence_is_the_highest_known(confidences, expected):
    memories = [mem(f"m{i}", "Run tests with pytest -q", confidence=c) for i, c in enumerate(confidences)]
    assert run(memories).merges[0].confidence == expected


def test_a_group_of_three_is_one_merge_ids_oldest_first():
    plan = run(
        [
            mem("z", "Run tests with pytest -q", age=1),
            mem("y", "Tests are run with pytest -q", age=5),
            mem("x", "Always run the tests with pytest -q", age=3),
        ]
    )
    assert [m.ids for m in plan.merges] == [("y", "x", "z")]


def test_merge_draft_appends_words_no_source_has_all_of():
    a = "Auth token storage is the PostgreSQL DB."
    b = "PostgreSQL tool for auth token storage"
    plan = run([mem("a", a), mem("b", b)])
    assert plan.merges[0].merged_text == "Auth token storage is the PostgreSQL DB (also: tool)."
    assert plan.merges[0].similarity == 0.67


def test_a_group_too_loose_for_one_draft_is_split():
    # every pair shares 4 of 6 words (0.67), but all five together would hold 9 words: 5/9 < 0.6
    extras = ["library", "service", "team", "tool", "db"]
    plan = run([mem(f"m{i}", f"Cache auth token expiry {extra}") for i, extra in enumerate(extras)])
    assert [m.ids for m in plan.merges] == [("m0", "m1", "m2", "m3")]  # the shortest text is left alone
    assert plan.merges[0].merged_text == "Cache auth token expiry library (also: service, team, tool)"
    merged = significant_words(plan.merges[0].merged_text)
    assert all(jaccard(significant_words(f"Cache auth token expiry {x}"), merged) > 0.6 for x in extras[:4])


@pytest.mark.parametrize(("variants", "merged"), [(10, True), (MAX_VARIANTS + 6, False)])
def test_too_many_differently_worded_variants_only_merge_identical_texts(variants, merged):
    weak = sorted(WEAK_WORDS)[:variants]
    memories = [mem(f"v{i:03d}", f"alpha beta gamma delta epsilon zeta eta theta {w}") for i, w in enumerate(weak)]
    memories += [
        mem("copy1", "Alpha beta gamma delta epsilon zeta eta theta"),
        mem("copy2", "alpha beta gamma delta epsilon zeta eta theta."),
    ]
    groups = [m.ids for m in run(memories).merges]
    if merged:
        assert len(groups) >= 2 and all(len(ids) > 2 for ids in groups)
    else:
        assert groups == [("copy1", "copy2")]


WEAK = ["db", "tool", "project", "team", "currently", "default", "service", "setting"]
CORE = [
    "auth",
    "token",
    "cache",
    "redis",
    "session",
    "login",
    "billing",
    "invoice",
    "queue",
    "worker",
    "retry",
    "timeout",
    "schema",
    "migration",
    "index",
    "column",
]
FILLER = ["the", "is", "for", "we", "use", "a", "of", "our", "with"]


def _variant(rng: random.Random, core: list[str]) -> str:
    words = core + rng.sample(WEAK, rng.randint(0, 2)) + rng.sample(FILLER, rng.randint(0, 3))
    rng.shuffle(words)
    text = " ".join(w.upper() if w == "db" and rng.random() < 0.5 else w for w in words)
    return text[0].upper() + text[1:] + rng.choice(["", ".", "!"])


@pytest.mark.parametrize("seed", range(40))
def test_every_merged_text_keeps_every_significant_word_of_its_sources(seed):
    rng = random.Random(seed)
    memories = []
    for group in range(4):
        core = rng.sample(CORE, rng.randint(3, 6))
        size = rng.randint(2, 4)
        memories += [mem(f"g{group}-{k}", _variant(rng, core), age=rng.randint(1, 50)) for k in range(size)]
    plan = run(memories)
    texts = {m.id: m.memory for m in memories}
    assert plan.merges, "the generator must produce merges for this test to mean anything"
    for merge in plan.merges:
        union = frozenset().union(*(significant_words(texts[i]) for i in merge.ids))
        assert significant_words(merge.merged_text) >= union
        if any(significant_words(texts[i]) == union for i in merge.ids):
            assert merge.merged_text in {texts[i] for i in merge.ids}
        assert (
            min(
                jaccard(significant_words(texts[a]), significant_words(texts[b])) for a, b in combinations(merge.ids, 2)
            )
            > 0.6
        )


# --- who takes part, types, one action per memory -------------------------------------------

SKIPPED = {
    "pinned": dict(pinned=True),
    "immutable": dict(immutable=True),
    "exclude_from_dream": dict(exclude_from_dream=True),
    "merged": dict(state="merged"),
    "superseded": dict(state="superseded"),
    "dream reminder": dict(source="mem0-dream-auto"),
}


@pytest.mark.parametrize("kind", SKIPPED)
def test_skipped_memories_take_part_in_no_action(kind):
    flags = SKIPPED[kind]
    memories = [
        mem("dup", "Run tests with pytest -q", **flags),
        mem("orig", "Tests are run with pytest -q"),
        mem("old", "Current branch is feature-x", type="session_state", age=300, **flags),
        mem("weak", "some generic advice", confidence=0.1, **flags),
        mem("ecs", "Deploy to ECS", age=9, **flags),
        mem("vercel", "Deploy to Vercel"),
    ]
    plan = run(memories)
    assert plan.is_empty
    assert plan.memory_count == 6
    unflagged = run(
        [
            mem(m.id, m.memory, type=m.type, created=m.created_at, confidence=m.metadata.get("confidence", MISSING))
            for m in memories
        ]
    )
    assert len(unflagged.memory_ids) == 6  # the same memories without the flag: every one acted on


def test_types_are_never_crossed():
    plan = run(
        [
            mem("a", "Run tests with pytest -q", type="convention"),
            mem("b", "Run tests with pytest -q", type="decision"),
            mem("c", "Deploy to ECS", type="decision"),
            mem("d", "Deploy to Vercel", type="environmental"),
            mem("e", "Use PostgreSQL for auth", type=None),
            mem("f", "Auth DB is PostgreSQL", type="unknown"),
        ]
    )
    assert plan.conflicts == ()
    assert plan.merges == (
        MergeAction(
            ids=("e", "f"), type="unknown", merged_text="Auth DB is PostgreSQL", confidence=None, similarity=0.67
        ),
    )


def test_precedence_retention_then_merge_then_conflict_then_low_confidence():
    plan = run(
        [
            mem("stale1", "Working on the login form", type="session_state", age=120),
            mem("stale2", "Working on the login form", type="session_state", age=5),
            mem("ecs1", "Deploy to ECS", age=30),
            mem("ecs2", "Deploy to ECS", age=20),
            mem("vercel", "Deploy to Vercel"),
            mem("tabs1", "Use tabs", confidence=0.1, age=7),
            mem("tabs2", "Don't use tabs", confidence=0.1),
            mem("dup1", "generic advice", confidence=0.1),
            mem("dup2", "Generic advice!", confidence=0.2),
        ]
    )
    assert plan.prunes == (PruneAction(id="stale1", type="session_state", age_days=120, reason="retention"),)
    assert [m.ids for m in plan.merges] == [("dup1", "dup2"), ("ecs1", "ecs2")]
    assert [c.ids for c in plan.conflicts] == [("tabs2", "tabs1")]


def test_each_memory_is_in_at_most_one_action():
    rng = random.Random(3)
    texts = [
        "Deploy to ECS",
        "Deploy to Vercel",
        "Use Redis",
        "Don't use Redis",
        "generic advice",
        "Run tests with pytest -q",
        "Tests are run with pytest -q",
        "API listens on port 8080",
    ]
    memories = [
        mem(
            f"m{i:03d}",
            rng.choice(texts),
            type=rng.choice(["decision", "session_state"]),
            age=rng.randint(0, 200),
            confidence=rng.choice([0.1, 0.9, MISSING]),
        )
        for i in range(120)
    ]
    plan = run(memories)
    assert len(plan.memory_ids) == len(set(plan.memory_ids)) > 40
    assert set(plan.fingerprints) == set(plan.memory_ids)


def test_duplicate_ids_in_the_input_take_part_in_nothing():
    plan = run([mem("a", "Deploy to ECS"), mem("a", "Deploy to ECS"), mem("b", "Deploy to ECS")])
    assert plan.is_empty


# --- prunes -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type", "age", "policy", "pruned"),
    [
        ("session_state", 90, DEFAULT_POLICY, False),
        ("session_state", 91, DEFAULT_POLICY, True),
        ("session_state", 90.99, DEFAULT_POLICY, False),  # whole days, floored
        ("compact_summary", 91, DEFAULT_POLICY, True),
        ("decision", 5000, DEFAULT_POLICY, False),  # no policy for the type
        ("session_state", 5000, {"session_state": None}, False),  # forever
        ("session_state", 1, {"session_state": 0}, True),
        ("session_state", 0.5, {"session_state": 0}, False),
        ("session_state", 200, {"session_state": True}, False),  # not a number of days
    ],
)
def test_retention(type, age, policy, pruned):
    plan = run([mem("m", "Current branch is feature-x", type=type, age=age)], policy)
    expected = (PruneAction(id="m", type=type, age_days=int(age), reason="retention"),) if pruned else ()
    assert plan.prunes == expected


@pytest.mark.parametrize("created", ["", "yesterday", "2026-13-45T00:00:00", "2030-01-01T00:00:00+00:00"])
def test_unknown_or_future_age_is_never_pruned_by_retention(created):
    assert run([mem("m", "Current branch is feature-x", type="session_state", created=created)]).is_empty


@pytest.mark.parametrize(
    ("parsed", "policy", "source"),
    [
        ({}, {"session_state": 90, "compact_summary": 90}, "default"),
        (None, {"session_state": 90, "compact_summary": 90}, "default"),
        ({"decision": 30}, {"decision": 30}, "mem0.md"),
        ({"session_state": None, "decision": 7}, {"session_state": None, "decision": 7}, "mem0.md"),
        ({"decision": "30d", "x": -1}, {"session_state": 90, "compact_summary": 90}, "default"),
    ],
)
def test_choose_policy(parsed, policy, source):
    assert choose_policy(parsed) == (policy, source)


def test_the_plan_records_the_valid_policy_entries_that_applied():
    plan = run([], {"decision": 30, "session_state": True, "bug_fix": None, "x": -3})
    assert plan.policy == {"decision": 30, "bug_fix": None}


def test_a_mem0_md_policy_replaces_the_defaults():
    policy, _ = choose_policy({"decision": 30})
    plan = run(
        [
            mem("s", "Current branch is feature-x", type="session_state", age=400),
            mem("d", "Deploy previews from main", type="decision", age=31),
        ],
        policy,
    )
    assert [p.id for p in plan.prunes] == ["d"]


@pytest.mark.parametrize(
    ("confidence", "pruned"),
    [
        (0.29, True),
        (0.0, True),
        (0.3, False),
        (0.9, False),
        (MISSING, False),
        (None, False),
        ("0.1", False),
        (True, False),
        (False, False),
        (float("nan"), False),
    ],
)
def test_low_confidence_threshold(confidence, pruned):
    plan = run([mem("m", "some generic advice about coding", confidence=confidence, age=40)])
    expected = (
        (PruneAction(id="m", type="decision", age_days=40, reason="low_confidence", confidence=confidence),)
        if pruned
        else ()
    )
    assert plan.prunes == expected


@pytest.mark.parametrize(
    ("text", "specific"),
    [
        ("some generic advice about coding", False),
        ("Remember to write good tests.", False),
        ("I think it is fine. Sometimes I forget", False),
        ("Check src/app/main.py first", True),
        ("The home directory is ~/.mem0", True),
        ("call get_user before saving", True),
        ("prefer getUser over fetchUser", True),
        ("edit config.yaml carefully", True),
        ("needs version 2.1 or later", True),
        ("upgrade to v3 soon", True),
        ("see https://example.com for details", True),
        ("run `make test` first", True),
        ("retry 3 times", True),
        ("ask Alice about it", True),
        ("the deploy uses ECS", True),
        ("pass --verbose when debugging", True),
    ],
)
def test_low_confidence_prunes_only_generic_text(text, specific):
    assert text_features(text).specific is specific
    assert bool(run([mem("m", text, confidence=0.1)]).prunes) is not specific


def test_low_confidence_age_of_an_undated_memory_is_zero():
    plan = run([mem("m", "generic advice", confidence=0.1, created="garbage")])
    assert plan.prunes == (PruneAction(id="m", type="decision", age_days=0, reason="low_confidence", confidence=0.1),)


# --- the plan as a whole --------------------------------------------------------------------


def _mixed_memories() -> list[Memory]:
    return [
        mem("a1", "Use PostgreSQL for auth", age=9),
        mem("a2", "Auth DB is PostgreSQL", age=4, version=3),
        mem("c1", "Deploy to ECS", age=30),
        mem("c2", "Deploy to Vercel", age=2),
        mem("s1", "Working on login", type="session_state", age=150),
        mem("g1", "generic advice", confidence=0.2),
        mem("k1", "Keep functions small", age=3),
        mem("p1", "Run tests with pytest -q", pinned=True),
    ]


def test_plan_header_and_fingerprints():
    plan = analyse(
        _mixed_memories(), {"session_state": 90}, NOW, user_id="alice", project_id="acme-api", policy_source="mem0.md"
    )
    assert (plan.version, plan.user_id, plan.project_id, plan.policy_source) == (1, "alice", "acme-api", "mem0.md")
    assert plan.generated_at == "2026-11-29T12:00:00+00:00"
    assert plan.policy == {"session_state": 90}
    assert plan.memory_count == 8
    assert plan.fingerprints == {"a1": "1", "a2": "3", "c1": "1", "c2": "1", "s1": "1", "g1": "1"}


@pytest.mark.parametrize("seed", range(5))
def test_plan_is_identical_under_shuffled_input(seed):
    memories = _mixed_memories() + [
        mem(f"x{i}", t)
        for i, t in enumerate(
            ["Tests are run with pytest -q", "Run tests with pytest -q", "Use Redis", "Don't use Redis"]
        )
    ]
    expected = plan_to_json(run(memories))
    shuffled = memories[:]
    random.Random(seed).shuffle(shuffled)
    assert plan_to_json(run(shuffled)) == expected


def test_analysis_reads_no_clock():
    memories = _mixed_memories()
    later = analyse(
        memories, DEFAULT_POLICY, NOW + timedelta(days=400), user_id="u", project_id="p", policy_source="default"
    )
    assert later.generated_at == "2028-01-03T12:00:00+00:00"
    assert {(p.id, p.age_days) for p in later.prunes} == {("s1", 550), ("g1", 401)}


@pytest.mark.parametrize("enabled", [True, False])
def test_the_garbage_collector_state_is_restored(enabled):
    (gc.enable if enabled else gc.disable)()
    try:
        run(_mixed_memories())
        with pytest.raises(InvalidInputError):
            analyse([], {}, "not a time", user_id="u", project_id="p", policy_source="default")  # type: ignore[arg-type]
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def test_empty_input_gives_an_empty_plan():
    plan = run([])
    assert plan.is_empty and plan.memory_count == 0 and plan.fingerprints == {}


# --- text features ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Use PostgreSQL for auth",
        "Don't use Redis; it isn’t needed",
        "Libraries, classes and buses",
        "Run `make test` at https://x.dev/a?b=1 — ünïcode Straße ÉCOLE",
        "",
        "   ",
        "I'm sure we'll use it's API",
    ],
)
def test_features_use_the_same_significant_words_as_search_and_health(text):
    assert text_features(text).sig == significant_words(text)


@pytest.mark.parametrize(
    ("text", "literals", "names"),
    [
        ("API listens on port 8080", {"8080"}, {"api"}),
        ("See ./scripts/x.sh, ~/.mem0 and /etc/hosts.", {"./scripts/x.sh", "~/.mem0", "/etc/hosts"}, set()),
        ("Docs at https://docs.acme.dev/v2 (see e.g. the FAQ)", {"https://docs.acme.dev/v2"}, {"faq"}),
        (
            "Set MEM0_HOME, call getUser() and os.path.join, pass -q",
            {"mem0_home", "getuser", "os.path.join", "-q"},
            set(),
        ),
        ("Python 3.11 and v2 on Tokyo servers. Tokyo is close", {"3.11", "v2"}, {"tokyo"}),
        ("and/or read/write long-haul", set(), set()),
        ("PostgreSQL and GitHub. Then I moved", set(), {"postgresql", "github"}),
        # a placeholder does not cut a path, and reads as "*" whatever it is called
        ("Strings in src/i18n/locales/<lang>/common.json.", {"src/i18n/locales/*/common.json"}, set()),
        ("Strings in src/i18n/locales/{lng}/common.json.", {"src/i18n/locales/*/common.json"}, set()),
        ("One file per command: src/commands/<name>.ts", {"src/commands/*.ts"}, set()),
        ("Keys like plantDetail.xxx, tests as xxx_test.cpp", {"plantdetail.*", "*_test.cpp"}, set()),
        ("Money goes in *_cents columns; the APPLE_API_* secrets", {"*_cents", "apple_api_*"}, set()),
        # a route parameter in brackets is part of the path; a glob keeps its stars
        ("Page in (src/routes/blog/[slug]/+page.svelte)", {"src/routes/blog/[slug]/+page.svelte"}, set()),
        ("Tests match src/**/*.test.ts", {"src/**/*.test.ts"}, set()),
        # an HTML tag or a type's parameter is no placeholder
        ("Wrap it in `<Suspense>`; returns `Vec<u8>`", {"suspense", "vec<u8>"}, set()),
    ],
)
def test_literals_and_names(text, literals, names):
    features = text_features(text)
    assert (set(features.literals), set(features.names)) == (literals, names)


@pytest.mark.parametrize("shape", ["a.", "a-", "a/", "1.", ".1", "a+", "~/", "www.", "aB", "--a", "Foo. ", "a_", "`a"])
def test_pathological_huge_texts_are_analysed_in_linear_time(shape):
    text = shape * 20_000 + " / :// ` _ . - 1 A"
    plan = run([mem("a", text), mem("b", text)])  # a quadratic pattern would take a minute here
    assert [m.ids for m in plan.merges] == [("a", "b")] or not text_features(text).sig


def test_a_literal_closed_by_a_huge_run_of_brackets_is_read_in_linear_time():
    text = "See http://x" + ")" * 200_000  # a quadratic strip of the closing brackets: about 17 s here
    plan = run([mem("a", text), mem("b", text)])
    assert [m.ids for m in plan.merges] == [("a", "b")]
    assert text_features("routes in (src/routes/[slug])").literals == {"src/routes/[slug]"}


# --- candidates and scale -----------------------------------------------------------------


@pytest.mark.parametrize("seed", range(10))
def test_similar_pairs_finds_exactly_the_pairs_above_the_threshold(seed):
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(30)]
    sets = [frozenset(rng.sample(vocabulary, rng.randint(0, 8))) for _ in range(150)]
    sets += [s | {rng.choice(vocabulary)} for s in sets[:40]]
    brute = [(i, j) for i, j in combinations(range(len(sets)), 2) if jaccard(sets[i], sets[j]) > 0.6]
    assert brute and similar_pairs(sets) == brute


def test_similar_pairs_boundary_is_strict():
    exactly = [frozenset("abc"), frozenset("abcde")]  # 3/5 = 0.6
    above = [frozenset("abcd"), frozenset("abcde")]  # 4/5
    assert similar_pairs(exactly) == [] and similar_pairs(above) == [(0, 1)]


def _synthetic(count: int, seed: int) -> tuple[list[Memory], list[tuple[str, str]]]:
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ra", "tu", "ven", "dor", "pel", "zan", "qui", "bro", "sta", "fex", "nim"]
    vocabulary = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(6000)})
    types = ["decision", "convention", "task_learning", "user_preference", "environmental"]
    memories = []
    for i in range(count):
        words = rng.sample(vocabulary, rng.randint(4, 12))
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), rng.choice(["Vercel", "Tokyo", "Redis", "Kafka", "ECS"]))
        if rng.random() < 0.2:
            words.append(str(rng.randint(1, 9000)))
        memories.append(
            mem(
                f"m{i:06d}",
                " ".join(words).capitalize(),
                type=rng.choice(types),
                age=rng.randint(0, 400),
                confidence=round(rng.uniform(0.3, 1), 2),
            )
        )
    injected = []
    for k, source in enumerate(rng.sample(memories, 300)):
        copy = mem(f"d{k:06d}", f"The {source.memory} for the project", type=source.type, created=source.created_at)
        memories.append(copy)
        injected.append((source.id, copy.id))
    rng.shuffle(memories)
    return memories, injected


def test_twenty_thousand_memories_finds_the_injected_duplicates():
    memories, injected = _synthetic(20_000, seed=11)
    plan = run(memories)
    merged_together = {frozenset(m.ids) for m in plan.merges}
    assert all(frozenset(pair) in merged_together for pair in injected)
    assert len(plan.memory_ids) == len(set(plan.memory_ids))


def test_a_text_with_a_nul_character_takes_part_in_nothing():
    """Another tool may have written one; a plan carrying it could not be read back."""
    from mem0_plugin.dream.plan import plan_to_json
    from mem0_plugin.dream.plan_file import plan_from_json

    plan = run([mem("a", "0", age=3), mem("b", "0\x00", age=2), mem("c", "Use Redis\x00", age=1)])
    assert plan.is_empty
    assert plan_from_json(plan_to_json(plan)) == plan
