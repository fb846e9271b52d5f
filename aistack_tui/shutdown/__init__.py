"""How the process ends: exit statuses, stop signals, closed output, leftover children,
the exit watchdog and one-line crash reports."""
