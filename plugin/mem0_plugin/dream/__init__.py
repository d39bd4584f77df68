"""Dream: the memory-consolidation engine (docs/dream.md)."""
