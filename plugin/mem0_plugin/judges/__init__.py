"""A language model as dream's judge, configured in ``$MEM0_HOME/config.yaml`` (docs/judges.md)."""
