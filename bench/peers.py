"""aistack side by side with the other coding agents, against the project's fake server.

    python bench/peers.py                       # print round trips and launch, 5 rounds
    python bench/peers.py print --rounds 10     # only the `-p` round trips
    python bench/peers.py launch                # only launch → prompt visible (tmux)
    python bench/peers.py --providers anthropic
    python bench/peers.py --before /tmp/old       # also an older aistack_tui tree, e.g.
        # git archive main aistack_tui | tar -x -C /tmp/old && compileall /tmp/old

Installs nothing. Every agent found on PATH (`claude`, `codex`, `gemini`, `vibe`) runs
against the same fake LLM server (fakes/fake_llm.py) as aistack; an absent one is
skipped with one line. aistack runs twice: over the lean transport (the default) and with
`AISTACK_LLM_TRANSPORT=sdk` (through the official SDKs, as before issue 26).

- print: `-p "say hi"` and `-p` with one Read tool call, per provider; CPU is user+sys of
  the process and its children (RUSAGE_CHILDREN), the commands interleaved round by round
  (the order alternates), so load from elsewhere on the machine hits all alike;
- launch: the interactive UI in a tmux pane, from the launch to the first screen showing
  the agent's prompt (median of the rounds, interleaved too).

The load average is printed with every table: on a shared machine compare ratios within
one run, not absolute numbers across runs. The peers' invocations follow their documented
flags for custom endpoints; they were not installed on the machine this was written on,
so a peer that does not reach the fake server shows as failed rather than measured.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import ROOT, scratch_env, table

from fakes.fake_llm import FakeLLMServer, RecordedRequest, ToolCall, Turn

AISTACK = [sys.executable, "-m", "aistack_tui.cli.main"]
MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4.1", "google": "gemini-2.5-pro"}
PROMPTS = {"text": "say hi", "tool": "Read calc.py and say in one line what it does"}
READ_TOOLS = ("Read", "read_file", "ReadFile", "view", "read")
PATH_KEYS = ("file_path", "absolute_path", "path", "filename")
CALC = "def add(a, b):\n    return a + b\n"


# ------------------------------------------------------------------ the scripted model


def _tools(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(name, input schema) of every tool the request offers, in any of the formats."""
    out: list[tuple[str, dict[str, Any]]] = []
    for tool in body.get("tools") or []:
        if "functionDeclarations" in tool or "function_declarations" in tool:
            for d in tool.get("functionDeclarations") or tool.get("function_declarations"):
                schema = d.get("parameters_json_schema") or d.get("parameters") or {}
                out.append((d["name"], schema))
        elif "function" in tool:
            out.append((tool["function"]["name"], tool["function"].get("parameters") or {}))
        elif "name" in tool:
            out.append((tool["name"], tool.get("input_schema") or tool.get("parameters") or {}))
    return out


def _has_tool_result(body: dict[str, Any]) -> bool:
    text = repr(body.get("messages") or body.get("contents") or body.get("input") or "")
    return any(mark in text for mark in ("tool_result", "'role': 'tool'", "functionResponse",
                                         "function_response", "function_call_output"))


def responder(repo: Path) -> Callable[[RecordedRequest], Turn]:
    """Answers any agent: a Read of calc.py when asked to read it, then a line of text."""

    def respond(rec: RecordedRequest) -> Turn:
        body = rec.body if isinstance(rec.body, dict) else {}
        asked = "calc.py" in repr(body.get("messages") or body.get("contents")
                                  or body.get("input") or "")
        if asked and not _has_tool_result(body):
            for name, schema in _tools(body):
                if name in READ_TOOLS:
                    props = schema.get("properties") or {}
                    key = next((k for k in PATH_KEYS if k in props), "file_path")
                    return Turn(tool_calls=[ToolCall(name, {key: str(repo / "calc.py")})])
        return Turn(text="It adds two numbers." if asked else "hi")

    return respond


# ------------------------------------------------------------------ the agents


@dataclass
class Agent:
    name: str
    provider: str
    binary: str | None
    command: Callable[[str, str], list[str]]
    """(prompt, server url) → argv; an empty prompt means the interactive UI."""
    env: Callable[[FakeLLMServer], dict[str, str]] = field(default=lambda s: {})
    ready: str = ""
    """Text on screen once the interactive prompt is visible."""
    session_ready: str = ""
    """Text on screen once a prompt would be sent at once (empty: same as `ready`)."""


BEFORE: list[Path] = []
"""Older aistack_tui trees to run beside this one (`--before`)."""


def aistack_agents(provider: str) -> list[Agent]:
    model = f"{provider}/{MODELS[provider]}"

    def command(prompt: str, url: str) -> list[str]:
        return [*AISTACK, *(["-p", prompt] if prompt else []), "--model", model]

    older = [
        Agent(f"aistack before ({tree})", provider, "aistack", command,
              lambda s, tree=tree: {**s.env(provider), "PYTHONPATH": str(tree)},
              ready="Ask anything", session_ready="ctx 0%")
        for tree in BEFORE
    ]
    return [*older,
        Agent("aistack", provider, "aistack", command, lambda s: s.env(provider),
              ready="Ask anything", session_ready="ctx 0%"),
        Agent("aistack (SDK path)", provider, "aistack", command,
              lambda s: {**s.env(provider), "AISTACK_LLM_TRANSPORT": "sdk"},
              ready="Ask anything", session_ready="ctx 0%"),
    ]


def peer_agents(provider: str) -> list[Agent]:
    if provider == "anthropic":
        return [Agent(
            "claude", provider, shutil.which("claude"),
            lambda p, url: ["claude", *(["-p", p, "--allowedTools", "Read"] if p else [])],
            lambda s: s.env("anthropic"), ready="for shortcuts")]
    if provider == "openai":
        def codex(p: str, url: str) -> list[str]:
            endpoint = (f'model_providers.fake={{name="fake",base_url="{url}/v1",'
                        'env_key="OPENAI_API_KEY",wire_api="chat"}')
            flags = ["-c", "model_provider=fake", "-c", endpoint, "-m", MODELS["openai"]]
            return ["codex", "exec", "--skip-git-repo-check", *flags, p] if p else [
                "codex", *flags]

        def vibe(p: str, url: str) -> list[str]:
            return ["vibe", *(["-p", p] if p else [])]

        return [
            Agent("codex", provider, shutil.which("codex"), codex, lambda s: s.env("openai"),
                  ready="send"),
            Agent("vibe", provider, shutil.which("vibe"), vibe, _vibe_env, ready=">"),
        ]
    return [Agent(
        "gemini", provider, shutil.which("gemini"),
        lambda p, url: ["gemini", *(["-p", p] if p else [])],
        lambda s: s.env("google"), ready="Type your message")]


def _vibe_env(server: FakeLLMServer) -> dict[str, str]:
    """mistral-vibe reads its providers from $VIBE_HOME/config.toml."""
    home = Path(tempfile.mkdtemp(prefix="vibe-home-"))
    (home / "config.toml").write_text(
        'active_model = "fake"\n\n[[providers]]\nname = "fake"\n'
        f'api_base = "{server.url}/v1"\napi_key_env_var = "OPENAI_API_KEY"\n'
        'backend = "generic"\n\n[[models]]\nname = "gpt-4.1"\nprovider = "fake"\n'
        'alias = "fake"\n')
    return {**server.env("openai"), "VIBE_HOME": str(home)}


# ------------------------------------------------------------------ measuring


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_print(agent: Agent, prompt: str, server: FakeLLMServer, env: dict[str, str],
              repo: Path) -> tuple[float, float, bool]:
    """(wall, CPU) seconds of one `-p` run and whether it answered."""
    cpu = _child_cpu()
    start = time.perf_counter()
    done = subprocess.run(agent.command(prompt, server.url), cwd=repo, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=300,
                          env={**env, **agent.env(server)}, check=False)
    wall = time.perf_counter() - start
    ok = done.returncode == 0 and ("hi" in done.stdout or "adds" in done.stdout)
    return wall, _child_cpu() - cpu, ok


def run_launch(agent: Agent, server: FakeLLMServer, env: dict[str, str], repo: Path,
               timeout: float = 30) -> tuple[float | None, float | None]:
    """Seconds from launching the UI in a tmux pane to its prompt on screen, and to its
    session being ready (aistack opens it after the first frame)."""
    session = f"peers-{os.getpid()}-{time.monotonic_ns()}"
    full = {**env, **agent.env(server)}
    exports = " ".join(f"{k}={_quote(v)}" for k, v in full.items()
                       if k.endswith(("_KEY", "_URL", "_HOME", "TRANSPORT")) or k in (
                           "PATH", "PYTHONPATH", "HOME", "TERM"))
    argv = " ".join(_quote(a) for a in agent.command("", server.url))
    start = time.perf_counter()
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "40",
                    "-c", str(repo), f"env {exports} {argv}"], check=True)
    prompt: float | None = None
    try:
        while time.perf_counter() - start < timeout:
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", session],
                                    capture_output=True, text=True, check=False).stdout
            now = time.perf_counter() - start
            if prompt is None and agent.ready in screen:
                prompt = now
            if prompt is not None and (agent.session_ready or agent.ready) in screen:
                return prompt, now
            time.sleep(0.01)
        return prompt, None
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True,
                       check=False)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} / {five:.2f} / {fifteen:.2f} ({os.cpu_count()} cores)"


def present(agents: list[Agent]) -> list[Agent]:
    found = []
    for agent in agents:
        if agent.binary is None:
            print(f"skipped: {agent.name} is not on PATH")
        else:
            found.append(agent)
    return found


def bench_print(providers: list[str], rounds: int) -> None:
    env, repo = scratch_env()
    (repo / "calc.py").write_text(CALC)
    with FakeLLMServer() as server:
        server.add(*[Turn(respond=responder(repo)) for _ in range(10_000)])
        for provider in providers:
            agents = present([*aistack_agents(provider), *peer_agents(provider)])
            for kind, prompt in PROMPTS.items():
                for agent in agents:  # warm-up: databases, caches, the page cache
                    run_print(agent, prompt, server, env, repo)
                before = load()
                samples: dict[str, list[tuple[float, float, bool]]] = {
                    a.name: [] for a in agents}
                for i in range(rounds):
                    for agent in agents if i % 2 == 0 else agents[::-1]:
                        samples[agent.name].append(run_print(agent, prompt, server, env, repo))
                ours = statistics.median(s[1] for s in samples["aistack"])
                rows = []
                for name, runs in samples.items():
                    cpu = statistics.median(s[1] for s in runs)
                    wall = statistics.median(s[0] for s in runs)
                    failed = sum(not s[2] for s in runs)
                    rows.append([name, f"{cpu * 1000:.0f}", f"{min(s[1] for s in runs) * 1000:.0f}",
                                 f"{wall * 1000:.0f}", f"{ours / cpu:.2f}" if cpu else "-",
                                 f"{failed}/{len(runs)}" if failed else ""])
                print(table(f"{provider}: -p {kind!r} ({prompt!r}), {rounds} interleaved rounds; "
                            f"{before}, after: {load()}",
                            ["agent", "CPU median ms", "CPU min ms", "wall median ms",
                             "aistack CPU / agent CPU", "failed"], rows), flush=True)


def bench_launch(providers: list[str], rounds: int) -> None:
    if shutil.which("tmux") is None:
        print("skipped: launch (tmux is not installed)")
        return
    env, repo = scratch_env()
    (repo / "calc.py").write_text(CALC)
    # A session of our own keeps the tmux server up between the measured ones (a server
    # exiting after a kill-session races with the next new-session).
    keeper = f"peers-keeper-{os.getpid()}"
    subprocess.run(["tmux", "new-session", "-d", "-s", keeper, "sleep 86400"], check=True)
    try:
        _launch_rounds(providers, rounds, env, repo)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", keeper], capture_output=True,
                       check=False)


def _launch_rounds(providers: list[str], rounds: int, env: dict[str, str], repo: Path) -> None:
    with FakeLLMServer() as server:
        agents: list[Agent] = []
        for provider in providers:
            agents += [a for a in present(peer_agents(provider)) if a not in agents]
        agents = [*aistack_agents(providers[0]), *agents]
        for agent in agents:
            run_launch(agent, server, env, repo)  # warm-up
        before = load()
        samples: dict[str, list[tuple[float | None, float | None]]] = {
            a.name: [] for a in agents}
        for i in range(rounds):
            for agent in agents if i % 2 == 0 else agents[::-1]:
                samples[agent.name].append(run_launch(agent, server, env, repo))
        ours = statistics.median(s[0] for s in samples["aistack"] if s[0] is not None)
        rows = []
        for name, runs in samples.items():
            seen = [s[0] for s in runs if s[0] is not None]
            ready = [s[1] for s in runs if s[1] is not None]
            median = statistics.median(seen) if seen else None
            rows.append([name, f"{median * 1000:.0f}" if median else "never",
                         f"{min(seen) * 1000:.0f}" if seen else "",
                         f"{statistics.median(ready) * 1000:.0f}" if ready else "never",
                         f"{ours / median:.2f}" if median else "-"])
        print(table(f"launch → prompt visible (tmux 120x40), {rounds} interleaved rounds; "
                    f"{before}, after: {load()}",
                    ["agent", "prompt median ms", "prompt min ms", "session ready median ms",
                     "aistack / agent"], rows), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("which", nargs="*", help="print, launch (default: both)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--providers", default="anthropic,openai,google")
    parser.add_argument("--before", type=Path, action="append", default=[],
                        help="an older aistack_tui tree's parent directory, run beside")
    args = parser.parse_args()
    BEFORE.extend(path.resolve() for path in args.before)
    which = args.which or ["print", "launch"]
    unknown = set(which) - {"print", "launch"}
    if unknown:
        parser.error(f"unknown benchmark {', '.join(sorted(unknown))}; choose print or launch")
    providers = [p for p in args.providers.split(",") if p in MODELS]
    # PYTHONDONTWRITEBYTECODE may be set: compile first, as an installed copy is.
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-x", "evals/tasks/",
                    str(ROOT / "aistack_tui")], check=False, capture_output=True)
    print(f"# aistack and its peers ({load()})")
    if "print" in which:
        bench_print(providers, args.rounds)
    if "launch" in which:
        bench_launch(providers, args.rounds)


if __name__ == "__main__":
    main()
