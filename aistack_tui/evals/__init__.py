"""`aistack eval`: coding tasks in fixture repos, run against a model, scored by checkers."""
