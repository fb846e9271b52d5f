"""`aistack doctor`: the checks of `session/doctor.py`, printed on stdout."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aistack_tui.session.config import RunConfig
    from aistack_tui.trust_gate import TrustDecision


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("doctor", help="check providers, storage, tools and the sandbox")
    p.add_argument(
        "--trust-project", action="store_true",
        help="check with this project's settings applied even if it is not trusted yet",
    )


async def run(args: argparse.Namespace, config: RunConfig, trust: TrustDecision) -> int:
    """Check everything; `config` is already gated (`trust` says what was left out)."""
    from aistack_tui.session.doctor import doctor_report

    return await doctor_report(config, trust, sys.stdout)
