"""aistack: an interactive terminal coding agent."""

__version__ = "0.1.0"
