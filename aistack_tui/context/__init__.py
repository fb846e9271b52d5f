"""System prompt assembly and budgeted context injection."""
