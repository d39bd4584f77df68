"""What the SQLite and PostgreSQL stores share: their reads (`reads.SqlReads`) and their write
primitives (`writer.SqlWriter`), written once in the SQL both databases run, with `?` marks;
where the two say a thing differently, each store's `Dialect` says it (`dialect`)."""
