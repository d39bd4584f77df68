"""Dream: the memory-consolidation engine (SPEC §7)."""
