"""One module per `aistack` subcommand: `register(subparsers)` and `run(...)`."""
