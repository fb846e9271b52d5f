"""Permission rules, modes, Bash analysis and guardrails: pure data and functions."""
