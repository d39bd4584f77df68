"""Credential detection and masking (docs/safety.md, "Credentials"): found, and never printed in full."""

from __future__ import annotations

import pytest
from mem0_plugin.secrets import find_secrets, has_secret, mask, secret_kinds

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM_BODY = "MIIEowIBAAKCAQEA7bq98KZ2e4uJpQ\nZ2e4uJpQMIIEowIBAAKCAQEA7bq98K"

CASES = [
    ("the AWS key is AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "AWS access key", "the AWS key is AKIA****"),
    (
        "OPENAI_API_KEY=sk-proj-Abc123def456ghi789jkl012mno",
        "sk-proj-Abc123def456ghi789jkl012mno",
        "API key",
        "OPENAI_API_KEY=sk-p****",
    ),
    (
        "token ghp_16C7e42F292c6912E7710c838347Ae178B4a in CI",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "GitHub token",
        "token ghp_**** in CI",
    ),
    ("slack bot xoxb-123456789012-abcdefghijkl", "xoxb-123456789012-abcdefghijkl", "Slack token", "slack bot xoxb****"),
    (f"session cookie {JWT}", JWT, "JSON web token", "session cookie eyJh****"),
    (
        f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----",
        PEM_BODY,
        "private key",
        "-----BEGIN RSA PRIVATE KEY-----****",
    ),
    ("db password=Tr0ub4dor&3xyz for staging", "Tr0ub4dor&3xyz", "assigned secret", "db password=Tr0**** for staging"),
    ("api_token: 9f8e7d6c5b4a3f2e1d0c", "9f8e7d6c5b4a3f2e1d0c", "assigned secret", "api_token: 9f8e****"),
    ("postgres://app:s3cr3tpass@db:5432/main", "s3cr3tpass", "password in URL", "postgres://app:s3****@db:5432/main"),
]


@pytest.mark.parametrize("text, secret, kind, masked", CASES)
def test_credentials_are_found_and_masked(text, secret, kind, masked):
    assert has_secret(text)
    assert kind in secret_kinds(text)
    shown = mask(text)
    assert shown == masked
    assert secret not in shown


@pytest.mark.parametrize(
    "text",
    [
        "Use sk-learn for the recommender",
        "token: <your token here>",
        "password: required",
        "DB_PASSWORD=${DB_PASSWORD}",
        "secret: ********",
        "The token is refreshed every 10 minutes",
        "Auth tokens expire after 15 minutes",
        "Deploy the API to ECS",
        "",
    ],
)
def test_ordinary_text_is_not_a_credential(text):
    assert find_secrets(text) == []
    assert mask(text) == text


def test_several_secrets_in_one_text_are_all_masked():
    text = "keys: AKIAIOSFODNN7EXAMPLE and ghp_16C7e42F292c6912E7710c838347Ae178B4a"
    assert mask(text) == "keys: AKIA**** and ghp_****"
    assert secret_kinds(text) == ["AWS access key", "GitHub token"]


def test_an_unterminated_private_key_is_masked_to_the_end():
    text = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
    assert mask(text) == "-----BEGIN OPENSSH PRIVATE KEY-----****"


def test_a_short_secret_keeps_at_most_a_quarter_visible():
    shown = mask("password=abcd1234")
    assert shown == "password=ab****"
