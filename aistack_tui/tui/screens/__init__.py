"""Modal and full screens of the TUI: main, confirm, sessions, model picker, setup."""
