"""Two texts compared: what a pair of memories is to each other (duplicate, contradiction,
replacement, two things), the guards and agreement rules, the rule registry, and the memory of
decided pairs. Imports the language package and the core modules only."""
