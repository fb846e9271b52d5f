"""Bash analysis: split a command line into the simple commands it would run.

Parser: tree-sitter-bash. It implements the whole grammar (heredocs, process substitution,
`case`, arithmetic), parses in microseconds in C, and marks what it cannot parse with
ERROR/MISSING nodes instead of giving up, so the walker below can visit every node type
explicitly and treat anything it doesn't recognise as a reason to ask. bashlex, the other
candidate, is pure Python, slower, and rejects common constructs outright.

Fail closed: the analysis never says "allow"; it lists `parts` (argument vectors, with
wrappers like `sudo`, `timeout`, `xargs`, `bash -c`, `eval`, `find -exec` looked through),
`files` a redirection reads or writes, and `problems`. Any problem makes the engine ask.
Words whose value depends on the runtime (`$X`, `$(...)`, globs in command names) carry a
NUL (`DYN`), which no rule contains, so they can never satisfy a literal rule.

This module walks the syntax tree (statements, words, redirections). Wrapper commands are
looked through in `bash_wrappers.py`, and the result types live in `bash_model.py`; both
are re-exported here, so this stays the one import for callers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from aistack_tui.permissions.bash_model import (
    CREDENTIAL_NAME,
    DYN,
    MAX_COMMAND_CHARS,
    MAX_DEPTH,
    MAX_NODES,
    MAX_PARTS,
    SHELLS,
    AnalysisContext,
    BashAnalysis,
    CommandPart,
    FileAccess,
    dangerous_env,
    describe,
    static_args,
)
from aistack_tui.permissions.bash_wrappers import PIPE_WRAPPERS, add_part
from aistack_tui.permissions.readonly_commands import env_is_safe

# The data types live in bash_model and the wrapper handling in bash_wrappers; they are
# re-exported so callers keep importing everything from here.
__all__ = [
    "DYN",
    "MAX_COMMAND_CHARS",
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_PARTS",
    "SHELLS",
    "BashAnalysis",
    "CommandPart",
    "FileAccess",
    "analyze",
    "dangerous_env",
    "describe",
    "static_args",
]

_LANGUAGE = Language(tree_sitter_bash.language())
_PARSER = Parser(_LANGUAGE)


def analyze(command: str, cwd: Path | None, home: Path) -> BashAnalysis:
    """Split `command` into parts, files and problems (see the module docstring)."""
    analysis = BashAnalysis(command)
    ctx = AnalysisContext(analysis, cwd, home, _analyze_into)
    _analyze_into(command, ctx, 0)
    if len(analysis.parts) > MAX_PARTS:
        ctx.problem(f"more than {MAX_PARTS} commands to analyse")
    return analysis


def _analyze_into(command: str, ctx: AnalysisContext, depth: int) -> None:
    if depth > MAX_DEPTH:
        ctx.problem("commands nested too deeply to analyse")
        return
    if len(command) > MAX_COMMAND_CHARS:
        ctx.problem(f"command longer than {MAX_COMMAND_CHARS} characters")
        return
    if "\x00" in command:
        ctx.problem("command contains a NUL byte")
        return
    if not command.strip():
        return
    data = command.encode("utf-8", "surrogatepass")
    tree = _PARSER.parse(data)
    root = tree.root_node
    if root.has_error:
        ctx.problem("the shell parser could not understand the command")
        return
    _statement(root, ctx, depth)


def _text(node: Node) -> str:
    raw = node.text
    return raw.decode("utf-8", "replace") if raw is not None else ""


_CONTAINERS = frozenset(
    {
        "program",
        "list",
        "compound_statement",
        "subshell",
        "do_group",
        "negated_command",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "until_statement",
        "for_statement",
        "case_statement",
        "case_item",
    }
)
_SKIP = frozenset({"comment"})
_LOOPS = frozenset({"for_statement", "while_statement", "until_statement"})
_WORDISH = frozenset(
    {
        "word",
        "string",
        "raw_string",
        "concatenation",
        "number",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "ansi_c_string",
        "translated_string",
        "brace_expression",
        "extglob_pattern",
    }
)
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})


def _statement(node: Node, ctx: AnalysisContext, depth: int) -> None:
    ctx.nodes += 1
    if ctx.nodes > MAX_NODES:
        ctx.problem("command too large to analyse")
        return
    kind = node.type
    if kind in _SKIP or not node.is_named:
        return
    if kind in _CONTAINERS or kind == "pipeline":
        _container(node, ctx, depth)
        return
    handler = _STATEMENTS.get(kind)
    if handler is not None:
        handler(node, ctx, depth)
    elif kind in _WORDISH:
        _word(node, ctx, depth)
    else:
        ctx.problem(f"unsupported shell construct: {kind}")


def _container(node: Node, ctx: AnalysisContext, depth: int) -> None:
    """A list, a pipeline, a loop, a group...: each statement in it; a pipeline's stage
    names are kept for the guardrails."""
    if node.type == "pipeline":
        ctx.analysis.pipelines.append([_stage_name(child) for child in node.named_children])
    before = ctx.cwd
    for child in node.named_children:
        if child.type == "variable_name":
            continue
        if child.type in _WORDISH:
            _word(child, ctx, depth)
        else:
            _statement(child, ctx, depth)
    if node.type in _LOOPS and ctx.cwd != before:
        ctx.problem("changes directory inside a loop")


def _stage_name(stage: Node) -> str:
    cmd = stage
    while cmd.type in ("redirected_statement", "negated_command") and cmd.named_children:
        cmd = cmd.named_children[0]
    return _static_name(cmd) if cmd.type == "command" else ""


def _redirected(node: Node, ctx: AnalysisContext, depth: int) -> None:
    for child in node.named_children:
        if child.type in _REDIRECTS:
            _redirect(child, ctx, depth)
        else:
            _statement(child, ctx, depth)


def _assignment_statement(node: Node, ctx: AnalysisContext, depth: int) -> None:
    _subscript_check(node, ctx)
    _standalone_assign_check(_assignments(node, ctx, depth), ctx)


def _declaration_statement(node: Node, ctx: AnalysisContext, depth: int) -> None:
    _subscript_check(node, ctx)
    _declaration(node, ctx, depth)


def _unset(node: Node, ctx: AnalysisContext, depth: int) -> None:
    _subscript_check(node, ctx)
    for child in node.named_children:
        if child.type in _WORDISH:
            _word(child, ctx, depth)


def _test_statement(node: Node, ctx: AnalysisContext, depth: int) -> None:
    _subscript_check(node, ctx)
    _test(node, ctx, depth)


def _function_definition(node: Node, ctx: AnalysisContext, depth: int) -> None:
    ctx.analysis.function_bodies.append(_text(node))
    ctx.problem("defines a shell function (it could shadow any command)")


def _static_name(command: Node) -> str:
    """The program a pipeline stage runs, looking past wrappers like `sudo` and `env`,
    read from the literal text without analysing it again (for guardrails only)."""
    words: list[str] = []
    for child in command.named_children:
        if child.type == "command_name" and child.named_children:
            words.append(_text(child.named_children[0]))
        elif child.type in ("word", "raw_string", "string", "number") and words:
            words.append(_text(child))
    for word in words:
        value, _ = _unescape_unquoted(word.strip("'\""))
        name = value.rsplit("/", 1)[-1]
        if name in PIPE_WRAPPERS or value.startswith("-") or "=" in value or value.isdigit():
            continue
        return name
    return ""


def _assignments(node: Node, ctx: AnalysisContext, depth: int) -> list[str]:
    names: list[str] = []
    targets = [node] if node.type == "variable_assignment" else list(node.named_children)
    for assignment in targets:
        if assignment.type != "variable_assignment":
            ctx.problem(f"unsupported assignment: {assignment.type}")
            continue
        name_node = assignment.child_by_field_name("name")
        name = _text(name_node) if name_node is not None else ""
        if name_node is None or name_node.type != "variable_name":
            ctx.problem("assignment to an array element or unusual target")
        names.append(name)
        value = assignment.child_by_field_name("value")
        if value is not None:
            _word(value, ctx, depth)
    return names


def _standalone_assign_check(names: list[str], ctx: AnalysisContext) -> None:
    # An assignment to a variable the environment already exports changes what every later
    # command sees (`MAKEFLAGS=--eval=...; make`), so only lower-case shell variables and
    # the allow-listed harmless ones are let through.
    for name in names:
        if dangerous_env(name) or not (name.islower() or env_is_safe((name,))):
            ctx.problem(f"sets {name}, which may change what later commands run")


def _declaration(node: Node, ctx: AnalysisContext, depth: int) -> None:
    for child in node.named_children:
        if child.type == "variable_assignment":
            _standalone_assign_check(_assignments(child, ctx, depth), ctx)
        elif child.type == "variable_name":
            name = _text(child)
            if dangerous_env(name) or not (name.islower() or env_is_safe((name,))):
                ctx.problem(f"exports {name}")
        elif child.type in _WORDISH:
            value, _ = _word(child, ctx, depth)
            # -i makes every assignment arithmetic (`a[$(cmd)]` runs cmd); -n follows a
            # name that may be such a subscript: neither is let through.
            if value not in ("-x", "-r", "-a", "-A", "-g", "-l", "-u"):
                ctx.problem(f"unsupported declaration option {value!r}")
        else:
            ctx.problem(f"unsupported shell construct: {child.type}")


_ARITH_TEST_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v", "-R"})


def _test(node: Node, ctx: AnalysisContext, depth: int) -> None:
    # `[[ $x -eq 1 ]]` evaluates $x arithmetically, which can run `a[$(cmd)]`, and so does
    # a quoted `[[ 'a[$(cmd)]' -eq 0 ]]` or `[[ -v 'a[$(cmd)]' ]]`: an arithmetic operator
    # or -v over anything but plain numbers is not something to wave through.
    tokens = [_text(c) for c in _leaves(node)]
    if tokens[:1] == ["["]:
        # The `[` builtin reads plain integers only; its `-v`/`-R` still evaluate a
        # subscript, and those ask.
        if any(t in ("-v", "-R") for t in tokens):
            ctx.problem("test -v evaluates an array subscript, which can run code")
        _substitutions(node, ctx, depth)
        return
    if any(t in _ARITH_TEST_OPS for t in tokens):
        operands = [t for t in tokens if t not in _ARITH_TEST_OPS and t not in ("[[", "]]")]
        if not all(t.lstrip("-").isdigit() or t in ("&&", "||", "!", "(", ")") for t in operands):
            ctx.problem("an arithmetic test over something other than numbers can run code")
    stack = list(node.named_children)
    while stack:
        child = stack.pop()
        if child.type in (
            "simple_expansion",
            "expansion",
            "command_substitution",
            "process_substitution",
            "arithmetic_expansion",
        ):
            ctx.problem("a [[ ]] test over expansions can run code")
            _word(child, ctx, depth)
            return
        stack.extend(child.named_children)


def _leaves(node: Node) -> list[Node]:
    out: list[Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.child_count == 0 or current.type in ("raw_string", "string", "word"):
            out.append(current)
        else:
            stack.extend(reversed(current.children))
    return out


# --- words ------------------------------------------------------------------------------

_DQ_ESCAPES = {"\\": "\\", '"': '"', "$": "$", "`": "`", "\n": ""}


def _unescape_unquoted(text: str) -> tuple[str, bool]:
    out: list[str] = []
    glob = False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append("" if nxt == "\n" else nxt)
            i += 2
            continue
        if ch in "*?[":
            glob = True
        out.append(ch)
        i += 1
    return "".join(out), glob


def _unescape_dq(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in _DQ_ESCAPES:
            out.append(_DQ_ESCAPES[text[i + 1]])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _substitutions(node: Node, ctx: AnalysisContext, depth: int) -> None:
    """Analyse every `$(...)`, backtick and `<(...)` below `node` as commands of their own."""
    stack = [node]
    while stack:
        current = stack.pop()
        ctx.nodes += 1
        if ctx.nodes > MAX_NODES:
            ctx.problem("command too large to analyse")
            return
        if current.type in ("command_substitution", "process_substitution"):
            saved = ctx.cwd
            for child in current.named_children:
                _statement(child, ctx, depth + 1)
            ctx.cwd = saved
            continue
        stack.extend(current.named_children)


def _word(node: Node | None, ctx: AnalysisContext, depth: int) -> tuple[str, bool]:
    """The static value of a word (DYN where it depends on the runtime), and whether it
    is an unquoted glob. Substitutions inside are analysed as commands."""
    if node is None:
        return DYN, False
    kind = node.type
    if kind == "word":
        text = _text(node)
        value, glob = _unescape_unquoted(text)
        if text == "~" or text.startswith("~/"):
            value = str(ctx.home) + value[1:]
        elif text.startswith("~"):
            return DYN, False
        if "{" in text and ("," in text or ".." in text):
            return DYN, True
        return value, glob
    if kind == "number":
        return _text(node), False
    if kind == "raw_string":
        return _text(node)[1:-1], False
    if kind in ("string", "translated_string"):
        pieces: list[str] = []
        for child in node.named_children:
            if child.type == "string_content":
                pieces.append(_unescape_dq(_text(child)))
            else:
                _note_credentials(child, ctx)
                _substitutions(child, ctx, depth)
                if child.type == "arithmetic_expansion":
                    _arith(child, ctx)
                pieces.append(DYN)
        return "".join(pieces), False
    if kind == "concatenation":
        values: list[str] = []
        any_glob = False
        for child in node.named_children:
            if child.type == "word" and _text(child) in ("{", "}"):
                _substitutions(node, ctx, depth)
                return DYN, True
            value, glob = _word(child, ctx, depth)
            values.append(value)
            any_glob = any_glob or glob
        return "".join(values), any_glob
    if kind in (
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "brace_expression",
        "ansi_c_string",
        "extglob_pattern",
    ):
        _note_credentials(node, ctx)
        _substitutions(node, ctx, depth)
        return DYN, kind in ("brace_expression", "extglob_pattern")
    if kind == "arithmetic_expansion":
        _arith(node, ctx)
        _substitutions(node, ctx, depth)
        return DYN, False
    ctx.problem(f"unsupported word: {kind}")
    return DYN, False


def _note_credentials(node: Node, ctx: AnalysisContext) -> None:
    """Record `$NAME` / `${NAME...}` expansions of credential-named variables."""
    if node.type not in ("simple_expansion", "expansion"):
        return
    for child in node.named_children:
        if child.type == "variable_name":
            name = _text(child)
            if CREDENTIAL_NAME.search(name) and name not in ctx.analysis.credential_vars:
                ctx.analysis.credential_vars.append(name)
            return


def _arith(node: Node, ctx: AnalysisContext) -> None:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in (
            "variable_name",
            "simple_expansion",
            "expansion",
            "command_substitution",
            "subscript",
        ):
            ctx.problem("arithmetic over variables can run code")
            return
        stack.extend(current.named_children)


# --- redirections -----------------------------------------------------------------------

_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})


def _redirect(node: Node, ctx: AnalysisContext, depth: int) -> None:
    if node.type == "herestring_redirect":
        for child in node.named_children:
            _word(child, ctx, depth)
    elif node.type == "heredoc_redirect":
        _heredoc(node, ctx, depth)
    else:
        _file_redirect(node, ctx, depth)


def _heredoc(node: Node, ctx: AnalysisContext, depth: int) -> None:
    """A here-document: its body's substitutions run unless the delimiter is quoted."""
    start = node.child_by_field_name("delimiter") or next(
        (c for c in node.named_children if c.type == "heredoc_start"), None
    )
    quoted = start is not None and any(q in _text(start) for q in "'\"\\")
    for child in node.named_children:
        if child.type == "heredoc_body" and not quoted:
            _substitutions(child, ctx, depth)
        elif child.type in _REDIRECTS:
            _redirect(child, ctx, depth)


_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"})


def _file_redirect(node: Node, ctx: AnalysisContext, depth: int) -> None:
    """`> f`, `>> f`, `< f`, `2>&1`...: a file read or written, recorded for the rules."""
    op = next((_text(c) for c in node.children if not c.is_named), "")
    dest = node.child_by_field_name("destination")
    if dest is None:
        named = [c for c in node.named_children if c.type != "file_descriptor"]
        dest = named[-1] if named else None
    if dest is None:
        ctx.problem("redirection without a target")
        return
    value, glob = _word(dest, ctx, depth)
    if op in (">&", "<&") and (dest.type == "number" or value == "-" or value.isdigit()):
        return  # a duplicated or closed descriptor, not a file
    if op in ("<&", ">&-", "<&-"):
        return
    write = op in _WRITE_OPS
    if not write and op != "<":
        ctx.problem(f"unsupported redirection {op!r}")
    elif DYN in value or glob:
        ctx.problem("a redirection target that depends on variables or globs")
    elif value not in _DEVICES and not value.startswith("/dev/fd/"):
        ctx.analysis.files.append(FileAccess(value, write, ctx.cwd, _text(node)))


# --- simple commands and wrappers -------------------------------------------------------


# `name[...$(...)...]`, `name[$x]`, `name[`...`]`: bash evaluates such a subscript as
# arithmetic wherever a variable name is read (`printf -v`, `read`, `test -v`, `unset`,
# `declare -i`, `(( ))`, `[[ -eq ]]`), and arithmetic runs command substitutions, even
# from a single-quoted string. No allowed command needs one, so any word like it asks.
_SUBSCRIPT_EXPANSION = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[[^\]]*[$`]")


def _subscript_check(node: Node, ctx: AnalysisContext) -> None:
    if _SUBSCRIPT_EXPANSION.search(_text(node)):
        ctx.problem("a word that bash may evaluate as an array subscript, which runs code")


def _command(node: Node, ctx: AnalysisContext, depth: int) -> None:
    _subscript_check(node, ctx)
    argv: list[str] = []
    globbed: set[int] = set()
    env: list[str] = []
    for child in node.named_children:
        if child.type == "variable_assignment":
            env.extend(_assignments(child, ctx, depth))
        elif child.type == "command_name":
            inner = child.named_children[0] if child.named_children else None
            value, glob = _word(inner, ctx, depth)
            if glob:
                globbed.add(len(argv))
            argv.append(value)
        elif child.type in _REDIRECTS:
            _redirect(child, ctx, depth)
        elif child.type in _WORDISH:
            value, glob = _word(child, ctx, depth)
            if glob:
                globbed.add(len(argv))
            argv.append(value)
        elif child.type == "comment":
            continue
        else:
            ctx.problem(f"unsupported shell construct in a command: {child.type}")
    if not argv:
        _standalone_assign_check(env, ctx)
        return
    if DYN in argv[0] or 0 in globbed:
        ctx.problem("the command name depends on variables, substitutions or globs")
        return
    add_part(
        tuple(argv), _text(node), frozenset(globbed), tuple(env), ctx, depth, views=(), wrappers=()
    )


_STATEMENTS: dict[str, Callable[[Node, AnalysisContext, int], None]] = {
    "redirected_statement": _redirected,
    "command": _command,
    "variable_assignment": _assignment_statement,
    "variable_assignments": _assignment_statement,
    "declaration_command": _declaration_statement,
    "unset_command": _unset,
    "test_command": _test_statement,
    "function_definition": _function_definition,
}
"""How each kind of statement node is analysed (lists, pipelines and loops are
containers; words are words; anything else is a construct the analysis refuses)."""
