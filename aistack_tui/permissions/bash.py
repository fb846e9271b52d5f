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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

DYN = "\x00"
MAX_COMMAND_CHARS = 10_000
MAX_DEPTH = 6
MAX_PARTS = 64
MAX_NODES = 20_000

_LANGUAGE = Language(tree_sitter_bash.language())
_PARSER = Parser(_LANGUAGE)

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox"})
# Variables that change what a command does or which program runs; a part that sets one
# cannot be allowed by a rule written for the plain command.
_DANGEROUS_ENV_EXACT = frozenset(
    {
        "PATH",
        "IFS",
        "ENV",
        "BASH_ENV",
        "PS4",
        "SHELLOPTS",
        "BASHOPTS",
        "PROMPT_COMMAND",
        "HOME",
        "EDITOR",
        "VISUAL",
        "NODE_OPTIONS",
        "JAVA_TOOL_OPTIONS",
        "PERL5OPT",
        "PERL5LIB",
        "RUBYOPT",
        "RUBYLIB",
        "LESSOPEN",
        "LESSCLOSE",
        "BROWSER",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "CDPATH",
        "GLOBIGNORE",
        "ZDOTDIR",
        "XDG_CONFIG_HOME",
        "TMPDIR",
    }
)
_DANGEROUS_ENV_PREFIXES = (
    "LD_",
    "DYLD_",
    "GIT_",
    "BASH_FUNC_",
    "PYTHON",
    "NPM_CONFIG_",
    "npm_config_",
    "CARGO_",
    "RUSTC",
)


def dangerous_env(name: str) -> bool:
    return (
        name in _DANGEROUS_ENV_EXACT
        or name.startswith(_DANGEROUS_ENV_PREFIXES)
        or "PAGER" in name
        or "EDITOR" in name
    )


@dataclass(frozen=True, slots=True)
class CommandPart:
    """One simple command the line would run.

    `views` go from the command as written (with wrappers) to the innermost program;
    deny/ask rules are tried on every view, allow rules on `views[allow_view]`.
    `needs_allow` is False for a `bash -c`/`eval` shell whose script became its own parts.
    """

    views: tuple[tuple[str, ...], ...]
    text: str
    cwd: tuple[Path, ...] | None
    env: tuple[str, ...] = ()
    wrappers: tuple[str, ...] = ()
    globbed: frozenset[int] = frozenset()
    allow_view: int = -1
    needs_allow: bool = True

    @property
    def argv(self) -> tuple[str, ...]:
        return self.views[-1]


@dataclass(frozen=True, slots=True)
class FileAccess:
    """A file a redirection opens: `>`/`>>`/`&>` write it, `<` reads it."""

    path: str
    write: bool
    cwd: tuple[Path, ...] | None
    text: str


@dataclass(slots=True)
class BashAnalysis:
    command: str
    parts: list[CommandPart] = field(default_factory=list)
    files: list[FileAccess] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # Pipelines as lists of argv[0] names, for guardrails such as `curl ... | sh`.
    pipelines: list[list[str]] = field(default_factory=list)
    function_bodies: list[str] = field(default_factory=list)


class _Ctx:
    __slots__ = ("analysis", "cwd", "home", "nodes")

    def __init__(self, analysis: BashAnalysis, cwd: Path | None, home: Path) -> None:
        self.analysis = analysis
        # Every directory the shell may be in: a `cd` that fails leaves it where it was,
        # so after `cd x` both the old and the new directory are possible.
        self.cwd: tuple[Path, ...] | None = (cwd,) if cwd is not None else None
        self.home = home
        self.nodes = 0

    def problem(self, why: str) -> None:
        if why not in self.analysis.problems:
            self.analysis.problems.append(why)


def analyze(command: str, cwd: Path | None, home: Path) -> BashAnalysis:
    """Split `command` into parts, files and problems (see the module docstring)."""
    analysis = BashAnalysis(command)
    ctx = _Ctx(analysis, cwd, home)
    _analyze_into(command, ctx, 0)
    if len(analysis.parts) > MAX_PARTS:
        ctx.problem(f"more than {MAX_PARTS} commands to analyse")
    return analysis


def _analyze_into(command: str, ctx: _Ctx, depth: int) -> None:
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


def _statement(node: Node, ctx: _Ctx, depth: int) -> None:
    ctx.nodes += 1
    if ctx.nodes > MAX_NODES:
        ctx.problem("command too large to analyse")
        return
    kind = node.type
    if kind in _SKIP or not node.is_named:
        return
    if kind in _CONTAINERS or kind == "pipeline":
        if kind == "pipeline":
            names = []
            for child in node.named_children:
                cmd = child
                while (
                    cmd.type in ("redirected_statement", "negated_command") and cmd.named_children
                ):
                    cmd = cmd.named_children[0]
                names.append(_static_name(cmd) if cmd.type == "command" else "")
            ctx.analysis.pipelines.append(names)
        before = ctx.cwd
        for child in node.named_children:
            if child.type == "variable_name":
                continue
            if child.type in _WORDISH:
                _word(child, ctx, depth)
            else:
                _statement(child, ctx, depth)
        if kind in _LOOPS and ctx.cwd != before:
            ctx.problem("changes directory inside a loop")
        return
    if kind == "redirected_statement":
        for child in node.named_children:
            if child.type in _REDIRECTS:
                _redirect(child, ctx, depth)
            else:
                _statement(child, ctx, depth)
        return
    if kind == "command":
        _command(node, ctx, depth)
        return
    if kind in ("variable_assignment", "variable_assignments"):
        _standalone_assign_check(_assignments(node, ctx, depth), ctx)
        return
    if kind == "declaration_command":
        _declaration(node, ctx, depth)
        return
    if kind == "unset_command":
        for child in node.named_children:
            if child.type in _WORDISH:
                _word(child, ctx, depth)
        return
    if kind == "test_command":
        _test(node, ctx, depth)
        return
    if kind == "function_definition":
        ctx.analysis.function_bodies.append(_text(node))
        ctx.problem("defines a shell function (it could shadow any command)")
        return
    if kind in _WORDISH:
        _word(node, ctx, depth)
        return
    ctx.problem(f"unsupported shell construct: {kind}")


_PIPE_WRAPPERS = frozenset(
    {
        "sudo",
        "doas",
        "env",
        "timeout",
        "nice",
        "nohup",
        "stdbuf",
        "command",
        "exec",
        "time",
        "ionice",
        "setsid",
    }
)


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
        if name in _PIPE_WRAPPERS or value.startswith("-") or "=" in value or value.isdigit():
            continue
        return name
    return ""


def _assignments(node: Node, ctx: _Ctx, depth: int) -> list[str]:
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


def _standalone_assign_check(names: list[str], ctx: _Ctx) -> None:
    for name in names:
        if dangerous_env(name):
            ctx.problem(f"sets {name}, which changes what later commands run")


def _declaration(node: Node, ctx: _Ctx, depth: int) -> None:
    for child in node.named_children:
        if child.type == "variable_assignment":
            _standalone_assign_check(_assignments(child, ctx, depth), ctx)
        elif child.type == "variable_name":
            if dangerous_env(_text(child)):
                ctx.problem(f"exports {_text(child)}")
        elif child.type in _WORDISH:
            value, _ = _word(child, ctx, depth)
            if value not in ("-x", "-r", "-a", "-A", "-i", "-g", "-l", "-u"):
                ctx.problem(f"unsupported declaration option {value!r}")
        else:
            ctx.problem(f"unsupported shell construct: {child.type}")


def _test(node: Node, ctx: _Ctx, depth: int) -> None:
    # `[[ $x -eq 1 ]]` evaluates $x arithmetically, which can run `a[$(cmd)]`; a test over
    # expansions is therefore not something to wave through.
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


def _substitutions(node: Node, ctx: _Ctx, depth: int) -> None:
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


def _word(node: Node | None, ctx: _Ctx, depth: int) -> tuple[str, bool]:
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
        _substitutions(node, ctx, depth)
        return DYN, kind in ("brace_expression", "extglob_pattern")
    if kind == "arithmetic_expansion":
        _arith(node, ctx)
        _substitutions(node, ctx, depth)
        return DYN, False
    ctx.problem(f"unsupported word: {kind}")
    return DYN, False


def _arith(node: Node, ctx: _Ctx) -> None:
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


def _redirect(node: Node, ctx: _Ctx, depth: int) -> None:
    if node.type == "herestring_redirect":
        for child in node.named_children:
            _word(child, ctx, depth)
        return
    if node.type == "heredoc_redirect":
        start = node.child_by_field_name("delimiter") or next(
            (c for c in node.named_children if c.type == "heredoc_start"), None
        )
        quoted = start is not None and any(q in _text(start) for q in "'\"\\")
        for child in node.named_children:
            if child.type == "heredoc_body" and not quoted:
                _substitutions(child, ctx, depth)
            elif child.type in _REDIRECTS:
                _redirect(child, ctx, depth)
        return
    op = ""
    for child in node.children:
        if not child.is_named:
            op = _text(child)
            break
    dest = node.child_by_field_name("destination")
    if dest is None:
        named = [c for c in node.named_children if c.type != "file_descriptor"]
        dest = named[-1] if named else None
    if dest is None:
        ctx.problem("redirection without a target")
        return
    value, glob = _word(dest, ctx, depth)
    if op in (">&", "<&") and (dest.type == "number" or value == "-" or value.isdigit()):
        return
    if op in ("<&", ">&-", "<&-"):
        return
    write = op in _WRITE_OPS
    if op not in _WRITE_OPS and op != "<":
        ctx.problem(f"unsupported redirection {op!r}")
        return
    if DYN in value or glob:
        ctx.problem("a redirection target that depends on variables or globs")
        return
    if value in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero") or (
        value.startswith("/dev/fd/")
    ):
        return
    ctx.analysis.files.append(FileAccess(value, write, ctx.cwd, _text(node)))


# --- simple commands and wrappers -------------------------------------------------------


def _command(node: Node, ctx: _Ctx, depth: int) -> None:
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
    _add_part(
        tuple(argv), _text(node), frozenset(globbed), tuple(env), ctx, depth, views=(), wrappers=()
    )


def _skip_options(
    argv: tuple[str, ...], i: int, with_value: frozenset[str], flags_ok: bool = True
) -> int:
    """Index of the first non-option word from `i`; `with_value` options eat the next word."""
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return i + 1
        if not word.startswith("-") or word == "-":
            return i
        if word in with_value:
            i += 2
            continue
        if not flags_ok:
            return i
        i += 1
    return i


_TIMEOUT_OPTS = frozenset({"-s", "--signal", "-k", "--kill-after"})
_NICE_OPTS = frozenset({"-n", "--adjustment"})
_SUDO_OPTS = frozenset(
    {
        "-u",
        "-g",
        "-p",
        "-C",
        "-h",
        "-D",
        "-R",
        "-T",
        "-U",
        "-r",
        "-t",
        "--user",
        "--group",
        "--prompt",
        "--chdir",
        "--host",
    }
)
_XARGS_OPTS = frozenset(
    {
        "-a",
        "-d",
        "-E",
        "-I",
        "-L",
        "-n",
        "-P",
        "-s",
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "--max-chars",
        "--max-lines",
        "--replace",
        "--eof",
        "--process-slot-var",
    }
)
_STDBUF_OPTS = frozenset({"-i", "-o", "-e"})
_IONICE_OPTS = frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"})
_EXEC_TRANSPARENT = frozenset({"nohup", "time", "command", "builtin", "exec", "setsid"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _shell_script(argv: tuple[str, ...]) -> tuple[str | None, bool]:
    """For `bash [opts] -c SCRIPT`, the script (None if dynamic) and True; else (None, False)."""
    i = 1
    while i < len(argv):
        word = argv[i]
        if word in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if word.startswith("--"):
            i += 1
            continue
        if word.startswith(("-", "+")) and len(word) > 1:
            if "c" in word[1:]:
                script = argv[i + 1] if i + 1 < len(argv) else ""
                return (None if DYN in script else script), True
            i += 1
            continue
        break
    return None, False


def _add_part(
    argv: tuple[str, ...],
    text: str,
    globbed: frozenset[int],
    env: tuple[str, ...],
    ctx: _Ctx,
    depth: int,
    views: tuple[tuple[str, ...], ...],
    wrappers: tuple[str, ...],
    allow_outer: bool = False,
) -> None:
    """Record `argv` as a part, first looking through any wrapper it starts with."""
    views = (*views, argv)
    name = argv[0].rsplit("/", 1)[-1] if argv and "/" in argv[0] else (argv[0] if argv else "")
    inner_start: int | None = None
    if name in ("cd", "pushd", "popd"):
        _record(views, text, globbed, env, ctx, wrappers, -1, True)
        _cd(argv, ctx)
        return None
    if name == "env":
        i = 1
        while i < len(argv):
            word = argv[i]
            if word in ("-u", "--unset"):
                i += 2
            elif word in ("-C", "--chdir") or word.startswith(("--chdir=", "-C")):
                ctx.cwd = None
                i += 2 if word in ("-C", "--chdir") else 1
            elif word.startswith(("-S", "--split-string")):
                ctx.problem("env -S splits a string into a command")
                return
            elif word.startswith("-") and word != "-":
                i += 1
            elif "=" in word and not word.startswith("="):
                env = (*env, word.split("=", 1)[0])
                i += 1
            else:
                break
        inner_start = i if i < len(argv) else None
    elif name == "timeout":
        i = _skip_options(argv, 1, _TIMEOUT_OPTS)
        inner_start = i + 1 if i + 1 < len(argv) else None
    elif name == "nice":
        i = 1
        if i < len(argv) and argv[i].startswith("-") and argv[i][1:].lstrip("-").isdigit():
            i += 1
        inner_start = _skip_options(argv, i, _NICE_OPTS)
    elif name in ("stdbuf", "ionice"):
        inner_start = _skip_options(argv, 1, _STDBUF_OPTS if name == "stdbuf" else _IONICE_OPTS)
    elif name in _EXEC_TRANSPARENT:
        if name in ("command", "builtin") and any(a in ("-v", "-V") for a in argv[1:2]):
            inner_start = None
        else:
            inner_start = _skip_options(argv, 1, frozenset({"-a"}))
    elif name in ("sudo", "doas"):
        i = _skip_options(argv, 1, _SUDO_OPTS)
        opts = argv[1:i]
        if any(o in ("-s", "-i", "--shell", "--login") for o in opts) and i < len(argv):
            script = " ".join(argv[i:])
            if DYN in script:
                ctx.problem("sudo -s with a dynamic command")
            else:
                _analyze_into(script, ctx, depth + 1)
            return _record(views, text, globbed, env, ctx, (*wrappers, name), 0, True)
        if i < len(argv):
            return _add_part(
                argv[i:],
                text,
                frozenset(),
                env,
                ctx,
                depth,
                views,
                (*wrappers, name),
                allow_outer=True,
            )
    elif name == "xargs":
        i = 1
        replace: str | None = None
        while i < len(argv):
            word = argv[i]
            if word == "--":
                i += 1
                break
            if not word.startswith("-") or word == "-":
                break
            if word in ("-I", "--replace"):
                replace = argv[i + 1] if i + 1 < len(argv) else None
                i += 2
            elif word.startswith("-I") and len(word) > 2:
                replace = word[2:]
                i += 1
            elif word in _XARGS_OPTS:
                i += 2
            else:
                i += 1
        inner = argv[i:] or ("echo",)
        inner = tuple(DYN if replace in a else a for a in inner) if replace else (*inner, DYN)
        if DYN in inner[0]:
            ctx.problem("xargs runs a command chosen at run time")
            return
        return _add_part(inner, text, frozenset(), env, ctx, depth, views, (*wrappers, name))
    elif name in SHELLS:
        script, is_c = _shell_script(argv)
        if is_c:
            if script is None:
                ctx.problem(f"{name} -c with a script that depends on variables")
            else:
                _analyze_into(script, ctx, depth + 1)
            return _record(views, text, globbed, env, ctx, (*wrappers, name), -1, False)
    elif name == "eval":
        script = " ".join(argv[1:])
        if DYN in script:
            ctx.problem("eval of a string that depends on variables")
        else:
            _analyze_into(script, ctx, depth + 1)
        return _record(views, text, globbed, env, ctx, (*wrappers, name), -1, False)
    elif name in ("watch",):
        i = _skip_options(argv, 1, frozenset({"-n", "--interval", "-d", "--differences"}))
        script = " ".join(argv[i:])
        if DYN in script or not script:
            ctx.problem("watch of a command that depends on variables")
        else:
            _analyze_into(script, ctx, depth + 1)
        return _record(views, text, globbed, env, ctx, (*wrappers, name), -1, False)
    elif name == "find":
        argv, globbed = _find(argv, globbed, text, env, ctx, depth, wrappers)
        views = (*views[:-1], argv)
    elif name in ("coproc", "trap", "alias", "enable", "shopt", "set", "hash", "fc"):
        ctx.problem(f"{name} changes how the shell runs later commands")
        return
    if inner_start is not None and inner_start < len(argv):
        inner = argv[inner_start:]
        if DYN in inner[0]:
            ctx.problem("a wrapper runs a command chosen at run time")
            return
        shifted = frozenset(i - inner_start for i in globbed if i >= inner_start)
        return _add_part(
            inner, text, shifted, env, ctx, depth, views, (*wrappers, name), allow_outer=allow_outer
        )
    allow_view = 0 if allow_outer else -1
    return _record(views, text, globbed, env, ctx, wrappers, allow_view, True)


def _record(
    views: tuple[tuple[str, ...], ...],
    text: str,
    globbed: frozenset[int],
    env: tuple[str, ...],
    ctx: _Ctx,
    wrappers: tuple[str, ...],
    allow_view: int,
    needs_allow: bool,
) -> None:
    ctx.analysis.parts.append(
        CommandPart(
            views=views,
            text=text,
            cwd=ctx.cwd,
            env=env,
            wrappers=wrappers,
            globbed=globbed,
            allow_view=allow_view,
            needs_allow=needs_allow,
        )
    )


def _find(
    argv: tuple[str, ...],
    globbed: frozenset[int],
    text: str,
    env: tuple[str, ...],
    ctx: _Ctx,
    depth: int,
    wrappers: tuple[str, ...],
) -> tuple[tuple[str, ...], frozenset[int]]:
    """Split `find ... -exec CMD {} ;` into the find itself and CMD as its own part."""
    kept: list[str] = []
    kept_globbed: set[int] = set()
    i = 0
    while i < len(argv):
        word = argv[i]
        if word in _FIND_EXEC:
            j = i + 1
            while j < len(argv) and argv[j] not in (";", "+"):
                j += 1
            inner = tuple(DYN if "{}" in a else a for a in argv[i + 1 : j])
            if not inner or DYN in inner[0]:
                ctx.problem(f"find {word} runs a command chosen at run time")
            else:
                _add_part(inner, text, frozenset(), env, ctx, depth, (), (*wrappers, "find"))
            i = j + 1
            continue
        if i in globbed:
            kept_globbed.add(len(kept))
        kept.append(word)
        i += 1
    return tuple(kept), frozenset(kept_globbed)


def _cd(argv: tuple[str, ...], ctx: _Ctx) -> None:
    """Follow `cd DIR`: later relative paths are checked from the old and the new place."""
    import os

    args = [a for a in argv[1:] if not a.startswith("-")] if argv[0] == "cd" else None
    if args is None or len(args) > 1 or "-" in argv[1:] or ctx.cwd is None:
        ctx.cwd = None
        return
    target = args[0] if args else str(ctx.home)
    if DYN in target:
        ctx.cwd = None
        return
    new = [Path(os.path.realpath(os.path.join(str(base), target))) for base in ctx.cwd]
    ctx.cwd = tuple(dict.fromkeys([*ctx.cwd, *new]))


def describe(analysis: BashAnalysis) -> list[str]:
    """One line per part for `permissions check`: what runs, through which wrappers."""
    lines: list[str] = []
    for part in analysis.parts:
        shown = " ".join(a.replace(DYN, "…") for a in part.argv)
        via = f"  (via {' > '.join(part.wrappers)})" if part.wrappers else ""
        note = "" if part.needs_allow else "  (script analysed separately)"
        lines.append(f"{shown}{via}{note}")
    for f in analysis.files:
        lines.append(f"{'write' if f.write else 'read'} {f.path}  (redirection)")
    return lines


def static_args(argv: tuple[str, ...]) -> list[Any]:
    """Arguments with DYN shown as `…`, for messages."""
    return [a.replace(DYN, "…") for a in argv]
