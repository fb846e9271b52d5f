"""The Textual full-screen front end; consumes only the agent core's events."""
