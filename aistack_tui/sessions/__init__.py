"""Sessions: conversations persisted message by message in SQLite."""
