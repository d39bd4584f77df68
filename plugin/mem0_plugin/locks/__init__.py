"""Locks that are not the store's own: the `mem0-dream --auto` lock (one run at a time per lock
path). Imports the core modules only."""
