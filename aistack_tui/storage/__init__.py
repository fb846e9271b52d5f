"""SQLite connections (WAL, FTS5, sqlite-vec) and migrations."""
