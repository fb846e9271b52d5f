"""MCP client: servers from .mcp.json, their tools as mcp__server__tool."""
