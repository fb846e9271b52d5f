"""Pure conversions: server results to content blocks, and safe tool names."""

from __future__ import annotations

from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

from aistack_tui.llm.types import ImageBlock, TextBlock
from aistack_tui.mcp.tools import convert_result, tool_name


def test_tool_names_are_safe_for_every_provider() -> None:
    assert tool_name("github", "create_issue") == "mcp__github__create_issue"
    dotted = tool_name("srv", "files.read")
    assert dotted.startswith("mcp__srv__files_read_")
    assert len(dotted) == len("mcp__srv__files_read_") + 6
    assert dotted != tool_name("srv", "files_read")  # no collision with the look-alike
    long = tool_name("server", "x" * 100)
    assert len(long) == 64
    assert long != tool_name("server", "x" * 99)


def test_every_content_kind_becomes_a_block() -> None:
    result = CallToolResult(content=[
        TextContent(type="text", text="hello"),
        ImageContent(type="image", data="aW1n", mime_type="image/png"),
        EmbeddedResource(type="resource", resource=BlobResourceContents(
            uri="file:///a.bin", mime_type="application/octet-stream", blob="AAAA")),
        EmbeddedResource(type="resource", resource=BlobResourceContents(
            uri="file:///b.png", mime_type="image/png", blob="cG5n")),
        ResourceLink(type="resource_link", uri="file:///c.txt", name="c.txt",
                     description="a file"),
        AudioContent(type="audio", data="AAAA", mime_type="audio/wav"),
    ])
    out = convert_result(result, max_chars=1000)
    assert out.is_error is False
    assert out.content == [
        TextBlock(text="hello"),
        ImageBlock(media_type="image/png", data="aW1n"),
        TextBlock(text="[binary resource file:///a.bin (application/octet-stream, 3 bytes)]"),
        ImageBlock(media_type="image/png", data="cG5n"),
        TextBlock(text="[resource link file:///c.txt c.txt: a file]"),
        TextBlock(text="[audio (audio/wav) returned; not shown]"),
    ]


def test_structured_only_errors_and_empty_results() -> None:
    structured = convert_result(CallToolResult(content=[], structured_content={"n": 1}), 1000)
    assert structured.content == '{\n  "n": 1\n}'
    error = convert_result(
        CallToolResult(content=[TextContent(type="text", text="bad")], is_error=True), 1000
    )
    assert (error.content, error.is_error) == ("bad", True)
    assert convert_result(CallToolResult(content=[]), 1000).content == (
        "(the tool returned no content)"
    )


def test_text_over_the_limit_is_cut_with_a_note_across_blocks() -> None:
    result = CallToolResult(content=[
        TextContent(type="text", text="a" * 60),
        TextContent(type="text", text="b" * 60),
        TextContent(type="text", text="c" * 60),
    ])
    out = convert_result(result, max_chars=100)
    assert isinstance(out.content, str)
    assert out.content.startswith("a" * 60 + "\n" + "b" * 40 + "\n")
    assert "c" not in out.content.split("[")[0]
    assert "the server returned 180 characters; only the first 100 are kept" in out.content
