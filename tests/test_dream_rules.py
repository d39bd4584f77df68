"""The registry of dream's named rules (`dream.rules`): every example is what the plan makes of
its two texts, and a decisive one changes when its rule is off (docs/quality.md, "The rules")."""

from __future__ import annotations

import pytest
from labelled import example_outcome, switched_off
from mem0_plugin.dream import rules

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
