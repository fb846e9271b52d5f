"""Non-interactive print mode (`aistack -p`) and its output formatters."""
