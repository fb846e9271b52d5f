"""Steering and follow-up queues: messages the user types while the agent works.

A steering message interrupts the plan: tool calls not yet started are skipped and the
message is delivered with the next tool results. A follow-up waits until the model has
finished its answer and then starts the next turn.
"""

from __future__ import annotations

from collections import deque


class MessageQueues:
    def __init__(self) -> None:
        self._steering: deque[str] = deque()
        self._follow_ups: deque[str] = deque()

    def steer(self, text: str) -> None:
        self._steering.append(text)

    def follow_up(self, text: str) -> None:
        self._follow_ups.append(text)

    def has_steering(self) -> bool:
        return bool(self._steering)

    def take_steering(self) -> list[str]:
        items = list(self._steering)
        self._steering.clear()
        return items

    def take_follow_ups(self) -> list[str]:
        items = list(self._follow_ups)
        self._follow_ups.clear()
        return items

    def pending(self) -> int:
        return len(self._steering) + len(self._follow_ups)
