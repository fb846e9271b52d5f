"""Layered settings: defaults, home, project, local, environment, flags."""
