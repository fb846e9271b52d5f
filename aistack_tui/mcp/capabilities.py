"""The SDK's client session, announcing exactly the capabilities aistack answers.

The SDK derives capabilities from the callbacks given: any elicitation callback announces
form and URL mode, any roots callback announces `listChanged`. aistack answers forms only
and its roots are fixed for a session, so both are narrowed here (see `client_side.py`).
"""

from __future__ import annotations

import mcp_types
from mcp.client.session import ClientSession


class AistackClientSession(ClientSession):
    def _build_capabilities(self, version: str) -> mcp_types.ClientCapabilities:
        caps = super()._build_capabilities(version)
        roots = caps.roots and mcp_types.RootsCapability(list_changed=False)
        elicitation = caps.elicitation and mcp_types.ElicitationCapability(
            form=mcp_types.FormElicitationCapability()
        )
        return caps.model_copy(update={"roots": roots, "elicitation": elicitation})
