"""The registry of dream's named rules (`relation.rules`): every example is what the plan makes of
its two texts, and a decisive one changes when its rule is off (docs/quality.md, "The rules")."""

from __future__ import annotations

import pytest
from labelled import example_outcome, switched_off
from mem0_plugin.relation import rules

CASES = [(rule, example) for rule in rules.RULES for example in rule.examples]


@pytest.mark.parametrize(("rule", "example"), CASES, ids=[f"{rule.name}-{i}" for i, (rule, _) in enumerate(CASES)])
def test_each_rule_decides_its_examples(rule, example):
    assert example_outcome(example) == example.expected
    if example.decisive:
        with switched_off(rule):
            assert example_outcome(example) != example.expected


def test_every_rule_has_a_decisive_example_and_a_name_of_its_own():
    assert len(rules.BY_NAME) == len(rules.RULES)
    for rule in rules.RULES:
        assert any(example.decisive for example in rule.examples), rule.name


def test_switching_a_rule_off_restores_it():
    rule = rules.BY_NAME["retires"]
    example = rule.examples[0]
    with switched_off(rule):
        pass
    assert example_outcome(example) == example.expected


def test_the_guards_read_a_long_run_of_name_characters_once():
    """A name is looked for where no name character precedes it: "x-x-x-…" (40,000 characters)
    backtracked from each of its characters (minutes) before; now it is read once."""
    from mem0_plugin.language.analysed import analysed
    from mem0_plugin.language.reading import reading_of
    from mem0_plugin.records import Memory
    from mem0_plugin.relation import agreement, guards

    def read(text: str):
        return reading_of(analysed(Memory(id=text[:8], memory=text, user_id="u")), {})

    other = read("We use Memcached for sessions.")
    for text in ("x-" * 20000, "now " + "x" * 40000 + " 代わりに", "x" * 40000 + " was removed"):
        long = read(text)
        assert not guards.retires(long, other) and not agreement.restates(long, other)
        assert guards.left_names(long) == frozenset()  # (no name: a run of one letter names nothing)
        assert guards.replaced_named(other, long) is None
