"""The SQLite store: one file, its migrations and its retries on a busy file."""
