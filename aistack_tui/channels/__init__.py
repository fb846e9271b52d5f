"""Channels beyond the terminal: the message bus between chat or editor front ends and
live sessions, the ACP server for editors and the Telegram gateway.

Nothing here is imported by the TUI or print mode; the protocol libraries load only when
`aistack acp` or `aistack gateway telegram` runs.
"""
