"""What a session's model calls have cost: tokens by model, dollars, time in the API.

The agent adds each answer's usage as it arrives; subagents, titles and WebSearch's own
calls add theirs under the model that made them, so `/cost` and print mode's report
cover every call.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aistack_tui.llm import types as lt


@dataclass
class UsageTotals:
    usage: lt.Usage = field(default_factory=lt.Usage)
    cost_usd: float | None = None
    api_ms: int = 0
    by_model: dict[str, lt.Usage] = field(default_factory=dict[str, lt.Usage])

    def add(self, model: str, usage: lt.Usage, cost: float | None) -> None:
        self.usage = self.usage + usage
        self.by_model[model] = self.by_model.get(model, lt.Usage()) + usage
        if cost is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost


def cost_since(total: float | None, before: float | None) -> float | None:
    """The cost added since `before`; None while no price is known."""
    return None if total is None else total - (before or 0.0)
