"""`aistack acp` with an editor that lends its file system, its terminals and its own MCP
servers: the client is the protocol library's client side, implementing `fs/*` and
`terminal/*` as an editor does (buffers that differ from the disk, commands actually run
with asyncio subprocesses), the model the fake LLM server."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    EnvVariable,
    FileSystemCapabilities,
    KillTerminalResponse,
    McpServerStdio,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    TerminalToolCallContent,
    ToolCallProgress,
    ToolCallStart,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.channels.test_acp_server import EditorClient, acp_agent
from tests.e2e.helpers import FAST_RETRY, write_user_settings

pytestmark = pytest.mark.slow

FAKES = Path(__file__).resolve().parents[2] / "fakes"
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d4944415478da63646060f80f00010401005d3f8a"
    "ae0000000049454e44ae426082")
EDITOR_SECRET = "editor-only-secret-value"


@dataclass
class Terminal:
    """A command the editor runs for the agent, with its output as a terminal keeps it."""

    argv: list[str]
    proc: asyncio.subprocess.Process
    limit: int | None
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    killed: bool = False
    released: bool = False
    reader: asyncio.Task[None] | None = None

    async def pump(self) -> None:
        assert self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(65536):
            self.output += chunk
            if self.limit is not None and len(self.output) > self.limit:
                del self.output[: len(self.output) - self.limit]
                self.truncated = True

    def kill(self) -> None:
        """As a terminal does: the command's whole process group."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def exit_status(self) -> tuple[int | None, str | None]:
        code = self.proc.returncode
        if code is not None and code < 0:
            return None, signal.Signals(-code).name
        return code, None


class FullEditor(EditorClient):
    """An editor offering `fs` and `terminal`: unsaved buffers, real terminals."""

    def __init__(self, buffers: dict[Path, str]) -> None:
        super().__init__()
        self.buffers = {str(path): text for path, text in buffers.items()}
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.refuse_writes: set[str] = set()
        self.terminals: dict[str, Terminal] = {}
        self.waited_on = asyncio.Event()
        """Set when the agent waits for a command to exit."""
        # The editor's own environment, which it merges into every terminal it opens.
        self.env = {**os.environ, "ACP_EDITOR_ONLY": EDITOR_SECRET}

    async def read_text_file(self, session_id: str, path: str, line: int | None = None,
                             limit: int | None = None, **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        text = self.buffers.get(path)
        if text is None:
            text = Path(path).read_text(encoding="utf-8")
        return ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id: str, path: str, content: str,
                              **kwargs: Any) -> WriteTextFileResponse:
        if path in self.refuse_writes:
            raise RequestError.internal_error({"details": "the buffer is read-only"})
        self.writes.append((path, content))
        self.buffers[path] = content
        Path(path).write_text(content, encoding="utf-8")  # applied and saved
        return WriteTextFileResponse()

    async def create_terminal(self, session_id: str, command: str,
                              args: list[str] | None = None,
                              env: list[EnvVariable] | None = None, cwd: str | None = None,
                              output_byte_limit: int | None = None,
                              **kwargs: Any) -> CreateTerminalResponse:
        argv = [command, *(args or [])]
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env={**self.env, **{e.name: e.value for e in env or []}},
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True)
        terminal = Terminal(argv, proc, output_byte_limit)
        terminal.reader = asyncio.create_task(terminal.pump())
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = terminal
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str,
                              **kwargs: Any) -> TerminalOutputResponse:
        terminal = self.terminals[terminal_id]
        status = None
        if terminal.proc.returncode is not None:
            if terminal.reader is not None:
                await terminal.reader
            code, name = terminal.exit_status()
            status = TerminalExitStatus(exit_code=code, signal=name)
        return TerminalOutputResponse(output=terminal.output.decode(errors="replace"),
                                      truncated=terminal.truncated, exit_status=status)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **kwargs: Any) -> WaitForTerminalExitResponse:
        terminal = self.terminals[terminal_id]
        self.waited_on.set()
        await terminal.proc.wait()
        if terminal.reader is not None:
            await terminal.reader
        code, name = terminal.exit_status()
        return WaitForTerminalExitResponse(exit_code=code, signal=name)

    async def kill_terminal(self, session_id: str, terminal_id: str,
                            **kwargs: Any) -> KillTerminalResponse:
        terminal = self.terminals[terminal_id]
        terminal.killed = True
        terminal.kill()
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str,
                               **kwargs: Any) -> ReleaseTerminalResponse:
        terminal = self.terminals[terminal_id]
        terminal.released = True
        if terminal.proc.returncode is None:
            terminal.kill()
        return ReleaseTerminalResponse()

    async def close(self) -> None:
        """Stop whatever still runs and drain every output, so no pipe outlives the test."""
        for terminal in self.terminals.values():
            if terminal.proc.returncode is None:
                terminal.kill()
            await asyncio.wait_for(terminal.proc.wait(), 10)
            if terminal.reader is not None:
                await asyncio.wait_for(terminal.reader, 10)

    def shown_terminals(self) -> dict[str, str]:
        """tool call id -> terminal id, from the tool call updates the agent sent."""
        return {u.tool_call_id: c.terminal_id for u in self.of(ToolCallProgress)
                for c in u.content or [] if isinstance(c, TerminalToolCallContent)}


CAPABLE = ClientCapabilities(
    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True)


def result_texts(server: FakeLLMServer) -> list[str]:
    """The text of every tool result the model was sent in its last request."""
    messages = server.model_requests[-1].body["messages"]
    texts: list[str] = []
    for message in messages:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") != "tool_result":
                continue
            content = block.get("content")
            texts.append(content if isinstance(content, str) else "".join(
                part.get("text", "") for part in content or []))
    return texts


def tool_results(server: FakeLLMServer) -> str:
    return "\n".join(result_texts(server))


async def test_read_sees_the_editor_buffer_not_the_disk(
        git_repo: Path, aistack_home: Path) -> None:
    write_user_settings(aistack_home, {**FAST_RETRY, "memory": False, "knowledge": False})
    notes = git_repo / "notes.txt"
    notes.write_text("saved on disk\n")
    (git_repo / "pixel.png").write_bytes(PIXEL)
    client = FullEditor({notes: "unsaved buffer text\n"})
    with FakeLLMServer() as server:
        async with acp_agent(client, git_repo, server, capabilities=CAPABLE) as conn:
            sid = (await conn.new_session(cwd=str(git_repo))).session_id
            server.add(Turn(tool_calls=[ToolCall("Read", {"file_path": "notes.txt"}),
                                        ToolCall("Read", {"file_path": "pixel.png"})]),
                       Turn(text="Read them."))
            done = await conn.prompt(session_id=sid, prompt=[text_block("read notes")])
            assert done.stop_reason == "end_turn"
            # Text through the editor; the image, which an editor has no text for, from disk.
            assert client.reads == [str(notes)]
            sent = tool_results(server)
            assert "unsaved buffer text" in sent and "saved on disk" not in sent
            assert "image/png" in sent


async def test_write_and_edit_hand_their_text_to_the_editor(
        git_repo: Path, aistack_home: Path) -> None:
    write_user_settings(aistack_home, {**FAST_RETRY, "memory": False, "knowledge": False})
    notes, locked = git_repo / "notes.txt", git_repo / "locked.txt"
    notes.write_text("title\nsaved line\n")
    locked.write_text("old\n")
    client = FullEditor({notes: "title\nunsaved line\n"})
    client.refuse_writes.add(str(locked))
    with FakeLLMServer() as server:
        async with acp_agent(client, git_repo, server, capabilities=CAPABLE) as conn:
            sid = (await conn.new_session(cwd=str(git_repo))).session_id

            # An Edit starts from the editor's text (what Read showed), so the user's
            # unsaved line survives; the result goes to the editor, which saves it.
            server.add(
                Turn(tool_calls=[ToolCall("Read", {"file_path": "notes.txt"})]),
                Turn(tool_calls=[ToolCall("Edit", {"file_path": "notes.txt",
                                                   "old_string": "title",
                                                   "new_string": "Title"})]),
                Turn(text="Edited."))
            client.answers = ["once"]
            done = await conn.prompt(session_id=sid, prompt=[text_block("capitalise")])
            assert done.stop_reason == "end_turn"
            assert client.writes == [(str(notes), "Title\nunsaved line\n")]
            assert notes.read_text() == "Title\nunsaved line\n"
            assert "Result around line 1" in result_texts(server)[-1]

            # A Write right after needs no new Read: the read record follows the editor.
            server.add(Turn(tool_calls=[ToolCall("Write", {
                "file_path": "notes.txt", "content": "rewritten\n"})]), Turn(text="Wrote."))
            client.answers = ["once"]
            await conn.prompt(session_id=sid, prompt=[text_block("rewrite")])
            assert client.writes[-1] == (str(notes), "rewritten\n")
            assert notes.read_text() == "rewritten\n"
            assert result_texts(server)[-1].startswith(f"Updated {notes}")

            # The editor refuses a write: the disk gets it and the model is told why.
            server.add(
                Turn(tool_calls=[ToolCall("Read", {"file_path": "locked.txt"})]),
                Turn(tool_calls=[ToolCall("Write", {"file_path": "locked.txt",
                                                    "content": "new\n"})]),
                Turn(text="Done."))
            client.answers = ["once"]
            await conn.prompt(session_id=sid, prompt=[text_block("replace locked")])
            assert locked.read_text() == "new\n"
            said = result_texts(server)[-1]
            assert said.startswith(f"(The editor could not write {locked} (")
            assert "the buffer is read-only" in said


async def test_bash_runs_in_the_editor_terminal_inside_the_sandbox(
        git_repo: Path, aistack_home: Path) -> None:
    write_user_settings(aistack_home, {**FAST_RETRY, "memory": False, "knowledge": False})
    client = FullEditor({})
    with FakeLLMServer() as server:
        async with acp_agent(client, git_repo, server, capabilities=CAPABLE) as conn:
            sid = (await conn.new_session(cwd=str(git_repo))).session_id

            # Bash runs in the editor's terminal, inside the sandbox, and its output (with
            # none of the editor's own variables) reaches the model.
            server.add(Turn(tool_calls=[ToolCall("Bash", {
                "command": "echo from-the-terminal; echo token=[$ACP_EDITOR_ONLY]"})]),
                Turn(text="Ran it."))
            done = await conn.prompt(session_id=sid, prompt=[text_block("run it")])
            assert done.stop_reason == "end_turn"
            [(terminal_id, terminal)] = client.terminals.items()
            if shutil.which("bwrap"):
                assert Path(terminal.argv[0]).name == "bwrap"
                assert "--unshare-all" in terminal.argv
                # Allowed as read-only: the read-only tier's private temp dirs.
                assert "--tmpfs" in terminal.argv
            assert terminal.released
            # It ran there (not here after a failed start): the editor's terminal printed it.
            assert b"from-the-terminal" in terminal.output
            sent = tool_results(server)
            assert "from-the-terminal" in sent
            assert "token=[]" in sent and EDITOR_SECRET not in sent
            [call_id] = [c for c, t in client.shown_terminals().items() if t == terminal_id]
            kinds = [type(u) for _, u in client.updates
                     if getattr(u, "tool_call_id", None) == call_id]
            assert kinds[0] is ToolCallStart  # the editor knew the call before its terminal
            final = [u for u in client.of(ToolCallProgress)
                     if u.tool_call_id == call_id and u.status == "completed"]
            assert final and any(isinstance(c, TerminalToolCallContent)
                                 for c in final[-1].content or [])

            # A command approved to write gets the write tier and changes the project.
            server.add(Turn(tool_calls=[ToolCall("Bash", {"command": "touch made.txt"})]),
                       Turn(text="Made it."))
            client.answers = ["once"]
            done = await conn.prompt(session_id=sid, prompt=[text_block("make a file")])
            assert done.stop_reason == "end_turn"
            assert (git_repo / "made.txt").exists()
            assert client.terminals["term-2"].proc.returncode == 0  # 125: never started
            assert "--tmpfs" not in client.terminals["term-2"].argv or not shutil.which("bwrap")

            # Cancel while the command runs: the editor is told to kill it.
            server.add(Turn(tool_calls=[ToolCall("Bash", {
                "command": "echo started; sleep 30; echo never"})]), Turn(text="unreachable"))
            client.waited_on.clear()
            running = asyncio.create_task(
                conn.prompt(session_id=sid, prompt=[text_block("wait a while")]))
            await asyncio.wait_for(client.waited_on.wait(), 30)
            # Cancel once the command runs (a kill during bwrap's set-up, which the
            # editor's group kill misses, is tests/sandbox/test_kill_tree.py's subject).
            while b"started" not in client.terminals["term-3"].output:
                await asyncio.sleep(0.02)
            await conn.cancel(session_id=sid)
            done = await asyncio.wait_for(running, 20)
            assert done.stop_reason == "cancelled"
            sleeper = client.terminals["term-3"]
            assert sleeper.killed and sleeper.released
            await asyncio.wait_for(sleeper.proc.wait(), 5)
            await client.close()
            assert b"never" not in sleeper.output


async def test_editor_mcp_server_starts_for_the_session(
        git_repo: Path, aistack_home: Path) -> None:
    write_user_settings(aistack_home, {**FAST_RETRY, "memory": False, "knowledge": False})
    client = EditorClient()
    server_entry = McpServerStdio(
        name="editor_tools", command=sys.executable,
        args=[str(FAKES / "mcp_server.py"), "stdio"],
        env=[EnvVariable(name="FAKE_MCP_GREETING", value="hi")])
    with FakeLLMServer() as server:
        async with acp_agent(client, git_repo, server) as conn:
            sid = (await conn.new_session(cwd=str(git_repo),
                                          mcp_servers=[server_entry])).session_id
            server.add(Turn(tool_calls=[ToolCall("mcp__editor_tools__env",
                                                 {"name": "FAKE_MCP_GREETING"})]),
                       Turn(text="Asked the editor's server."))
            client.answers = ["once"]
            done = await conn.prompt(session_id=sid, prompt=[text_block("use your tools")])
            assert done.stop_reason == "end_turn"
            first = server.model_requests[0].body
            assert "mcp__editor_tools__env" in [t["name"] for t in first["tools"]]
            assert result_texts(server)[-1] == "hi"

            # A malformed entry is refused by the same validation as .mcp.json, and said;
            # the session opens without it.
            bad = McpServerStdio(name="bad__name", command="x", args=[], env=[])
            other = (await conn.new_session(cwd=str(git_repo), mcp_servers=[bad])).session_id
            server.add(Turn(text="Fine."))
            await conn.prompt(session_id=other, prompt=[text_block("hello")])
            said = "".join(u.content.text for s, u in client.updates
                           if s == other and getattr(u, "content", None) is not None
                           and getattr(u.content, "type", "") == "text")
            assert "bad__name" in said and "skipped" in said
            assert not any(t["name"].startswith("mcp__bad")
                           for t in server.model_requests[-1].body["tools"])
