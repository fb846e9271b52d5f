"""The session layer: run configuration, provider resolution and the live session facade.

Front ends (the TUI, print mode, the line mode, channels) hold a `LiveSession` from
`bootstrap.open_session` and talk to the core only through it and the agent's events;
they read what a person typed through one input interpreter (`session.input`).
Nothing is imported here eagerly: `aistack --version` must not pay for the SDKs.
"""
