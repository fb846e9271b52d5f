"""The line-mode front end (`aistack --classic`): a scrolling REPL on prompt_toolkit and Rich
that talks to the core only through the session facade and its events."""
