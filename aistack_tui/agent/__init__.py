"""The agent runtime: turn loop, events, tool running, queues and stops."""
