"""Long-term memory: layered, searchable, injected before each turn."""
