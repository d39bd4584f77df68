"""The PostgreSQL store (docs/stores.md): the same records and rules as the SQLite store on a
shared database, with its own migrations, filters, search, pages, vectors and retries."""
