"""What the first frame waits for (issue 26, launch → prompt): only what paints it. The
session, the event renderer with its markdown and syntax widgets and the dialogs load
after it, and the cyclic GC the CLI paused for start-up is resumed right after it."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.tui.conftest import MODEL, wait_for

LOADED_AT_FIRST_FRAME = """
import json, sys
from aistack_tui.session.config import make_run_config
from aistack_tui.tui.app import AistackApp

class FirstFrame(AistackApp):
    def on_ready(self, event):
        event.prevent_default()  # stop here: the modules loaded until the first frame
        self.loaded = sorted(sys.modules)
        self.exit(0)

app = FirstFrame(make_run_config(model=sys.argv[1]), None, local_servers=())
app.run(headless=True, size=(120, 40))
print(json.dumps(app.loaded))
"""

LOADED_LATER = (
    "aistack_tui.bootstrap",
    "aistack_tui.agent.events",
    "aistack_tui.agent.ports",
    "aistack_tui.tui.renderer",
    "aistack_tui.tui.bridge",
    "aistack_tui.tui.widgets.messages",
    "aistack_tui.tui.screens.confirm",
    "aistack_tui.tui.screens.model_picker",
    "aistack_tui.tui.screens.elicitation",
    "aistack_tui.checkpoints.manager",
    "markdown_it",
    "pygments",
    "rich.markdown",
    "rich.syntax",
)


def test_the_first_frame_loads_no_session_renderer_markdown_or_dialogs(
    git_repo: Path, aistack_home: Path
) -> None:
    env = {**os.environ, "AISTACK_HOME": str(aistack_home), "ANTHROPIC_API_KEY": "unused"}
    done = subprocess.run([sys.executable, "-c", LOADED_AT_FIRST_FRAME, MODEL], cwd=git_repo,
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert "aistack_tui.tui.widgets.prompt_input" in loaded  # the probe saw the frame
    assert sorted(name for name in LOADED_LATER if name in loaded) == []


async def test_the_gc_paused_for_start_up_is_resumed_after_the_first_frame(make_app) -> None:
    app = make_app()
    frozen_before = gc.get_freeze_count()
    gc.disable()  # as the CLI leaves it for the TUI's start-up
    try:
        async with app.run_test() as pilot:
            await wait_for(pilot, lambda: app.renderer is not None)
            assert gc.isenabled()
            assert gc.get_freeze_count() > frozen_before  # start-up's objects exempted
            await wait_for(pilot, lambda: app.session is not None)  # then quit cleanly
    finally:
        gc.enable()
