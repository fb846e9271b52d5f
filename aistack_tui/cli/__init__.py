"""Entry points: argv to settings to a front end or a subcommand."""
