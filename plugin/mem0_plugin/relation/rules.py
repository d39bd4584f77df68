"""The registry of dream's named pair rules (docs/quality.md, "The rules"). Pure data.

Each rule is a predicate that the pair reading calls by name: `where` lists the names it is
called by ("package.module.name", as the calling module imports it) and `off` is what it answers when
the rule is switched off: the answer that lets a pair through as if the rule were not written.
`benchmarks/quality.py --ablation` switches each off in turn on both labelled sets and reports
what it adds, what it costs and its share of the CPU; tests/test_relation_rules.py checks every
example both ways (what the plan makes of the pair alone with the rule on, and that the rule
off changes it).

An example is two texts, the older first, and the cosine of their vectors; `expected` is what
dream's plan makes of the two alone: "merge", "conflict", "supersede", "candidate" (a question
left to a judge) or None (left alone). The texts' readings (literals, negations, change
markers, names) are what the rules read, not rules of their own.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    older: str
    newer: str
    cosine: float
    expected: str | None
    type: str = "decision"
    decisive: bool = True  # the rule off changes what the plan makes of it (else another rule decides it too)


@dataclass(frozen=True)
class Rule:
    name: str
    kind: str  # "guard": refuses a merge; "apart": two things, neither merged nor in conflict; "finds": a merge or a contradiction
    says: str
    where: tuple[str, ...]
    off: object
    examples: tuple[Example, ...]


def _e(older: str, newer: str, cosine: float, expected: str | None, *, decisive: bool = True) -> Example:
    return Example(older, newer, cosine, expected, decisive=decisive)


RULES: tuple[Rule, ...] = (
    # ---- guards: what refuses a merge (`guards`, `agreement`)
    Rule(
        "replaces",
        "guard",
        "the newer text marks a change the older does not: a replacement, never a duplicate",
        ("relation.meaning.replaces",),
        False,
        (
            _e("Releases are tagged by hand.", "Releases are now tagged by release-please.", 0.75, "supersede"),
            _e("Unit tests run with Jest.", "Unit tests now run with Jest in watch mode.", 0.9, "supersede"),
        ),
    ),
    Rule(
        "retires",
        "guard",
        "one text says a thing was removed, dropped, retired or is no longer used, and the other names it",
        ("relation.meaning.retires",),
        False,
        (
            _e(
                "The user wants dark mode in the editor.",
                "The user no longer wants dark mode, only the light theme.",
                0.85,
                "supersede",
            ),
            _e("memcached 已移除。", "缓存用 memcached。", 0.8, "conflict"),
            _e("Для кэша используем Memcached.", "Memcached убрали.", 0.75, "supersede"),
            _e(
                "We use Memcached for sessions.",
                "Redis and Postgres are used for sessions; Memcached was removed.",
                0.85,
                "supersede",
                decisive=False,
            ),
        ),
    ),
    Rule(
        "negation_clash",
        "guard",
        'one text forbids doing something ("never commit") that the other tells the reader to do',
        ("relation.meaning.negation_clash",),
        False,
        (
            _e(
                "Commit the generated client so CI doesn't need the generator.",
                "The generated client is gitignored; don't commit it.",
                0.8,
                "conflict",
            ),
            _e(
                "Never commit the generated client.",
                "Commit the generated client so CI does not need to run the generator.",
                0.8,
                "conflict",
            ),
        ),
    ),
    Rule(
        "names_lost",
        "guard",
        "each text names something the other does not write (a literal, a package-like name): a merge would lose one",
        ("relation.meaning.names_lost",),
        False,
        (
            _e(
                "Release binaries are cross-compiled with `cross` in release.yml.",
                "Release binaries are cross-compiled with cargo-zigbuild in release.yml.",
                0.8,
                "candidate",
            ),
        ),
    ),
    Rule(
        "across_languages",
        "guard",
        "the texts are in different scripts and one is negated, marks a change, restricts or time-limits where the other does not",
        ("relation.meaning.across_languages",),
        False,
        (
            _e(
                "Message edits overwrite the `body` column in place.",
                "编辑消息时不要覆盖 `body` 列。",
                0.8,
                "candidate",
            ),
            _e(
                "Terraform applies to prod go through the CI trigger.",
                "prod への terraform apply は CI トリガー経由。ただし障害対応中に限りローカルから apply してよい。",
                0.8,
                "candidate",
            ),
        ),
    ),
    Rule(
        "time_limited",
        "guard",
        'one text limits its statement in time ("for now", "temporarily", "пока что", "暂时") and the other does not',
        ("relation.meaning.time_limited",),
        False,
        (
            _e("Deploy with Helm.", "Temporarily deploy with Helm.", 0.9, "candidate"),
            _e(
                "Preview builds go to the staging bucket.",
                "Preview builds temporarily go to the staging bucket.",
                0.88,
                "candidate",
            ),
            _e("预览构建上传到 staging 桶。", "预览构建暂时上传到 staging 桶。", 0.88, "candidate"),
        ),
    ),
    Rule(
        "restates",
        "guard",
        'an acknowledgement ("Noted:", "Confirmed —", "好的", "Понял") repeating the other is a duplicate, never a conflict',
        ("relation.meaning.restates",),
        False,
        (
            _e("Deploy with Helm; raw manifests are banned.", "Confirmed: deploy with Helm.", 0.8, "merge"),
            _e("Never deploy on Fridays.", "Confirmed: deploys on Fridays are never done.", 0.82, "merge"),
            _e("I prefer tabs over spaces", "Noted: you prefer tabs", 0.75, "merge", decisive=False),
        ),
    ),
    Rule(
        "same_choice",
        "guard",
        '"Y over X" and a text stating Y without naming X are the same choice, no flip',
        ("relation.polarity.same_choice",),
        False,
        (_e("I prefer tabs over spaces", "You prefer tabs", 0.85, "merge"),),
    ),
    # ---- what makes a contradiction
    Rule(
        "polarity_flipped",
        "finds",
        "one text only is negated, negating what the other says",
        ("relation.meaning.polarity_flipped",),
        False,
        (
            _e(
                "Source maps are uploaded to Sentry on release.",
                "Source maps are not uploaded to Sentry on release.",
                0.9,
                "conflict",
            ),
        ),
    ),
    Rule(
        "switched",
        "finds",
        "one setting written as a switch, on in one text and off in the other",
        ("relation.meaning.switched",),
        False,
        (
            _e("Set catchup=True on new DAGs.", "New DAGs must be created with catchup=False.", 0.85, "conflict"),
            _e(
                "Enable strict mode: strict=true in tsconfig.",
                "tsconfig has strict=false for the legacy pages.",
                0.8,
                "conflict",
            ),
        ),
    ),
    Rule(
        "moved_away",
        "finds",
        "the newer says it moved from what the older says to something the older does not",
        ("relation.meaning.moved_away",),
        False,
        (_e("The project builds with webpack.", "Moved the build from webpack to vite.", 0.55, "supersede"),),
    ),
    Rule(
        "replaced_both_ways",
        "finds",
        "a value of one kind (port, version, path, URL, number …) each text holds and the other does not",
        ("relation.meaning.replaced_both_ways",),
        False,
        (
            _e(
                "The API listens on port 8080 in the container.",
                "In the container the API is on port 3000.",
                0.8,
                "conflict",
            ),
            _e("Node version for CI is 18.", "CI runs on Node 20.", 0.8, "conflict"),
        ),
    ),
    Rule(
        "retired_value",
        "finds",
        'a marked change naming the older text\'s value as the old one ("now 25 MB; 10 MB was too small")',
        ("relation.meaning.retired",),
        False,
        (_e("Uploads may be at most 10 MB.", "Uploads now stop at 25 MB; 10 MB was too small.", 0.55, "supersede"),),
    ),
    Rule(
        "replaced_named",
        "finds",
        'a conflict whose newer text names what of the older it replaced ("X was removed", "Y instead of X") is a supersede',
        ("dream.supersedes.replaced_named",),
        None,
        (_e("Sessions are kept in Memcached.", "Sessions are kept in Redis instead of Memcached.", 0.8, "supersede"),),
    ),
    Rule(
        "introduced",
        "finds",
        "a marked change naming something the older does not is a contradiction below cosine 0.60",
        ("relation.meaning.introduced",),
        False,
        (_e("Releases are tagged by hand.", "Releases are now tagged by Changesets.", 0.55, "supersede"),),
    ),
    # ---- what makes a merge
    Rule(
        "shared_evidence",
        "finds",
        "below cosine 0.78 a merge needs a literal, two names or many words in common",
        ("relation.meaning.shared_evidence",),
        False,
        (_e("Run `make lint` before pushing.", "Before every push, `make lint` has to pass.", 0.7, "merge"),),
    ),
    # ---- what sets two things apart (neither merged nor a conflict)
    Rule(
        "one_holds_all",
        "apart",
        "a merge keeps every literal: one text must hold every literal of both",
        ("relation.meaning.one_holds_all",),
        True,
        (
            _e(
                "Logs go to Loki (see `deploy/loki.yaml`).",
                "Logs go to Loki; the shipper is `promtail`.",
                0.9,
                "candidate",
            ),
        ),
    ),
    Rule(
        "identifier_differs",
        "apart",
        "another identifier without a marked change: another thing",
        ("relation.meaning.identifier_differs",),
        False,
        (
            _e("Call `fetchUser` from the loader.", "Call `fetchOrders` from the loader.", 0.9, None),
            _e(
                "The CI secret MAPS_API_KEY is set per flavor.",
                "Per flavor the CI secret SEGMENT_WRITE_KEY is set.",
                0.86,
                None,
            ),
        ),
    ),
    Rule(
        "named_apart",
        "apart",
        "two hyphenated names of one family, each text holding one",
        ("relation.meaning.named_apart",),
        False,
        (
            _e(
                "Run docker compose up mock-upstream for local tests.",
                "For local tests, docker compose up mock-admin runs the mocks.",
                0.88,
                None,
            ),
        ),
    ),
    Rule(
        "adds_condition",
        "apart",
        'one text restricts the statement ("only", "unless", "except", softer "when") and the other does not',
        ("relation.meaning.adds_condition", "relation.retired_values.adds_condition"),
        False,
        (
            _e("Run the linter on every commit.", "Run the linter on every commit, except in CI.", 0.9, "candidate"),
            _e(  # the condition restates its statement's own words ("s3"): what it adds is the setting
                "Build logs are uploaded to S3.",
                "Build logs go to S3 only if the build logs sink is s3, as in production; elsewhere they stay on disk.",
                0.85,
                "candidate",
            ),
        ),
    ),
    Rule(
        "tool_swapped",
        "apart",
        "each text names a tool the other does not",
        ("relation.meaning.tool_swapped",),
        False,
        (
            _e(
                "Error tracking in the web app is done with Sentry.",
                "The web app reports errors to Bugsnag.",
                0.8,
                "candidate",
            ),
        ),
    ),
    Rule(
        "swapped_words",
        "apart",
        "one sentence with a word swapped and a value replaced: each subject its own value",
        ("relation.meaning.swapped_words",),
        [],
        (
            _e("The gRPC API listens on port 8001.", "The HTTP API listens on port 8000.", 0.8, None),
            _e("The worker's timeout is 30 s.", "The API's timeout is 60 s.", 0.72, None, decisive=False),
        ),
    ),
    Rule(
        "narrowed",
        "apart",
        "the longer text is the shorter one's sentence continued with a scope",
        ("relation.meaning.narrowed",),
        False,
        (
            _e(
                "Use react-native-fast-image for remote images",
                "Use react-native-fast-image for remote images in feed lists",
                0.93,
                "candidate",
            ),
        ),
    ),
    Rule(
        "scoped_apart",
        "apart",
        "the texts name other environments (staging, QA, beta, a sandbox)",
        ("relation.meaning.scoped_apart", "relation.retired_values.scoped_apart"),
        False,
        (
            _e(
                "The search index is rebuilt nightly at 02:00.",
                "On staging the search index is rebuilt nightly at 04:00.",
                0.8,
                None,
            ),
        ),
    ),
    Rule(
        "subject_swapped",
        "apart",
        "the same sentence about another subject: another thing's value",
        ("relation.meaning.subject_swapped", "relation.retired_values.subject_swapped"),
        False,
        (_e("The refunds worker retries 3 times.", "The payouts worker now retries 5 times.", 0.8, "candidate"),),
    ),
    Rule(
        "template_swapped",
        "apart",
        "one template told of two subjects, each with its own value",
        ("relation.meaning.template_swapped",),
        False,
        (
            _e(
                "The session cookie expires after 12 hours.",
                "The refresh token cookie expires after 30 days.",
                0.58,
                None,
            ),
        ),
    ),
    Rule(
        "containment",
        "apart",
        "a contradiction needs a quarter of the subject's words in common",
        ("relation.meaning.containment", "relation.retired_values.containment"),
        1.0,
        (
            _e(
                "Grafana dashboards are provisioned from JSON files.",
                "The queue consumer no longer retries failed jobs.",
                0.62,
                "candidate",
            ),
        ),
    ),
    # ---- passes over a type group (`per_type`)
    Rule(
        "lexical_merges",
        "finds",
        "near-identical wording merges without vectors (Jaccard of significant words above 0.6)",
        ("dream.per_type.find_merges",),
        [],
        (
            _e(
                "Always run the migrations before starting the API server locally.",
                "Always run migrations before starting the API server locally.",
                0.4,
                "merge",
            ),
        ),
    ),
    Rule(
        "lexical_conflicts",
        "finds",
        "the same predicate with another value, or the same words negated, without vectors",
        ("dream.per_type.find_conflicts",),
        [],
        (_e("Deploy to ECS.", "Deploy to Vercel.", 0.3, "conflict"),),
    ),
    Rule(
        "about_two_things",
        "apart",
        "a lexical conflict the pair rules read as about two things is dropped",
        ("dream.per_type.about_two_things",),
        False,
        (_e("MAPS_API_KEY is injected per flavor.", "SEGMENT_WRITE_KEY is injected per flavor.", 0.86, None),),
    ),
    Rule(
        "retired_pairs",
        "finds",
        "a marked change naming an old value finds the text that holds it, far apart in meaning",
        ("dream.per_type.retired_pairs",),
        [],
        (
            _e(
                "The tile server answers on port 7800.",
                "Moved the tile server off 7800 to 7801 for the new proxy.",
                0.35,
                "supersede",
            ),
        ),
    ),
    Rule(
        "named_pairs",
        "finds",
        'a marked change naming what it left ("replaced X with Y", "X is no longer used") finds the older text naming X, far apart in meaning',
        ("dream.per_type.named_pairs",),
        [],
        (
            _e(
                "Python deps via pip-tools: edit requirements.in and run pip-compile.",
                "Replaced pip-tools with uv; the lockfile is uv.lock.",
                0.3,
                "supersede",
            ),
        ),
    ),
)

BY_NAME = {rule.name: rule for rule in RULES}
