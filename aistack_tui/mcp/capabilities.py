"""The SDK's client session, announcing exactly the capabilities aistack answers.

The SDK derives capabilities from the callbacks given: any elicitation callback announces
form and URL mode. aistack answers forms only, so that is narrowed here. Roots keep the
SDK's `listChanged`: `/add-dir` changes them and the servers are told
(`McpManager.set_roots`). See `client_side.py`.
"""

from __future__ import annotations

import mcp_types
from mcp.client.session import ClientSession


class AistackClientSession(ClientSession):
    def _build_capabilities(self, version: str) -> mcp_types.ClientCapabilities:
        caps = super()._build_capabilities(version)
        roots = caps.roots and mcp_types.RootsCapability(list_changed=True)
        elicitation = caps.elicitation and mcp_types.ElicitationCapability(
            form=mcp_types.FormElicitationCapability()
        )
        return caps.model_copy(update={"roots": roots, "elicitation": elicitation})
