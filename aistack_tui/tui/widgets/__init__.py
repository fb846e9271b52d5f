"""Widgets of the TUI: conversation, tool cards, todo panel, status bar, prompt input."""
