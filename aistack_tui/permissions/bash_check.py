"""The judgement of one Bash command line under the rules.

`bash.py` splits the command into parts and redirections; here each part must be allowed
on its own: deny rules first (on every view of a part, and on every file it may open or
write), then ask rules, then allow rules, the read-only judgement and the mode. An allowed
command also gets what the sandbox lets it do (`ExecGrant`): the read-only tier only when
nothing but the read-only judgement allowed it.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from aistack_tui.permissions import modes
from aistack_tui.permissions.bash_model import (
    DYN,
    BashAnalysis,
    CommandPart,
    dangerous_env,
    describe,
)
from aistack_tui.permissions.guardrails import dangerous_command_warnings
from aistack_tui.permissions.paths import (
    PathError,
    expand_glob,
    is_secret,
    is_within,
    protected_reason,
    real,
    secret_name_could_match,
)
from aistack_tui.permissions.readonly_commands import classify, env_is_safe, risky_option
from aistack_tui.permissions.rulebook import Rulebook, by_rule, static_prefix
from aistack_tui.permissions.rules import bash_rule_matches
from aistack_tui.permissions.suggest import suggest_bash_rule
from aistack_tui.permissions.types import (
    READ_ONLY_GRANT,
    Behavior,
    Decision,
    ExecGrant,
)
from aistack_tui.permissions.writes import implied_writes

_Pending = tuple[Behavior, str | None, str]
"""A part or redirection that was not allowed: behavior, suggested rule, reason."""


@dataclass(slots=True)
class _Verdicts:
    """What the parts and redirections of one command came to."""

    approvals: list[str] = field(default_factory=list[str])
    pending: list[_Pending] = field(default_factory=list[_Pending])
    writes: bool = False
    network: bool = False


@dataclass(frozen=True, slots=True)
class _Asked:
    """The parts of a Decision every answer about one command shares."""

    shown: tuple[str, ...]
    runs_git: bool

    def decision(
        self,
        behavior: Behavior,
        reason: str,
        rule: str | None = None,
        suggested: str | None = None,
        warnings: Sequence[str] = (),
    ) -> Decision:
        # An ask carries what a yes would grant, so the runner knows whether it runs git.
        grant = ExecGrant("write", True, self.runs_git) if behavior == "ask" else None
        return Decision(behavior, reason, rule, suggested, tuple(warnings), self.shown, grant)


class BashCheck:
    """Judges command lines under the rules of `book` (the engine itself)."""

    def __init__(self, book: Rulebook) -> None:
        self.book = book

    def decide(self, command: str, cwd: Path | None) -> Decision:
        """The decision for `command`, run in `cwd` (None: the session's directory)."""
        # The tree-sitter parser loads on the first Bash check, not at start-up.
        from aistack_tui.permissions.bash import analyze

        book = self.book
        analysis = analyze(command, real(cwd) if cwd is not None else book.cwd, book.home)
        runs_git = any(
            part.argv and os.path.basename(part.argv[0]) == "git" for part in analysis.parts
        )
        asked = _Asked(tuple(describe(analysis)), runs_git)
        denied = self._denied(analysis)
        if denied is not None:
            return asked.decision("deny", denied[0], denied[1])
        warnings = self._warnings(analysis)
        if analysis.problems:
            return asked.decision(
                "ask", f"cannot analyse safely: {analysis.problems[0]}", warnings=warnings
            )
        if not analysis.parts and not analysis.files:
            return asked.decision(
                "ask", "the command runs nothing that could be checked", warnings=warnings
            )
        for part in analysis.parts:
            for view in _views(part):
                rule = book.first(book.ask_rules, "Bash", lambda r, v=view: bash_rule_matches(r, v))
                if rule is not None:
                    return asked.decision(
                        "ask", f"{by_rule(rule)} asks before {_show(view)}", rule.text,
                        warnings=warnings,
                    )
        return self._conclude(asked, self._verdicts(analysis), warnings, runs_git)

    def _warnings(self, analysis: BashAnalysis) -> list[str]:
        """What the confirm dialog shows in every mode; a command with any asks."""
        warnings = dangerous_command_warnings(analysis, self.book.project_root, self.book.home)
        if any(p.cwd is None for p in analysis.parts) or any(
            f.cwd is None for f in analysis.files
        ):
            analysis.problems.append("a `cd` to a directory only known at run time")
        warnings += self._protected_writes(analysis)
        # A credential in a command line goes wherever the command sends it (a URL, a log):
        # that is for the user to see, in every mode.
        warnings += [
            f"passes ${name} (a credential) to a command" for name in analysis.credential_vars
        ]
        return warnings

    def _verdicts(self, analysis: BashAnalysis) -> _Verdicts:
        out = _Verdicts()
        for part in analysis.parts:
            if not part.needs_allow:
                continue
            behavior, suggested, why, read_only = self._part(part)
            if behavior == "allow":
                out.approvals.append(why)
                # Only the read-only judgement keeps the kernel's read-only tier: a rule or
                # the mode allowed this part as written, with its writes and network.
                if not read_only:
                    out.writes = out.network = True
            else:
                out.pending.append((behavior, suggested, why))
        for f in analysis.files:
            for cwd in f.cwd or [None]:
                d = self._redirect_decision(f.path, f.write, cwd)
                if d.behavior == "allow":
                    out.approvals.append(f"{f.text}: {d.reason}")
                    out.writes = out.writes or f.write
                else:
                    out.pending.append((d.behavior, d.suggested_rule, f"{f.text}: {d.reason}"))
        return out

    @staticmethod
    def _conclude(
        asked: _Asked, verdicts: _Verdicts, warnings: list[str], runs_git: bool
    ) -> Decision:
        pending = verdicts.pending
        first_deny = next((p for p in pending if p[0] == "deny"), None)
        if first_deny is not None:
            return asked.decision("deny", first_deny[2], warnings=warnings)
        if pending:
            first = pending[0]
            extra = f" (and {len(pending) - 1} more)" if len(pending) > 1 else ""
            # One rule can only stand for one command: a compound or dangerous command
            # offers no "don't ask again" at all, so it is answered once.
            single = len(pending) == 1 and not warnings
            suggested = first[1] if single else None
            return asked.decision("ask", first[2] + extra, suggested=suggested, warnings=warnings)
        if warnings:
            return asked.decision("ask", f"dangerous command: {warnings[0]}", warnings=warnings)
        writes, network = verdicts.writes, verdicts.network
        grant = ExecGrant("write", network, runs_git) if writes or network else READ_ONLY_GRANT
        return Decision(
            "allow",
            "; ".join(dict.fromkeys(verdicts.approvals)) or "allowed",
            parts=asked.shown,
            grant=grant,
        )

    def _denied(self, analysis: BashAnalysis) -> tuple[str, str] | None:
        """(reason, rule) when a deny rule covers a part, a redirection or a file a part
        reads or writes."""
        book = self.book
        for part in analysis.parts:
            for view in _views(part):
                rule = book.first(
                    book.deny_rules, "Bash", lambda r, v=view: bash_rule_matches(r, v)
                )
                if rule is not None:
                    return f"{_show(view)} is denied by {by_rule(rule)}", rule.text
        for f in analysis.files:
            for cwd in f.cwd or [book.cwd]:
                try:
                    path = book.resolve(f.path, cwd)
                except PathError:
                    continue
                tool = "Write" if f.write else "Read"
                rule = book.path_rule(book.deny_rules, tool, path)
                if rule is not None:
                    return (
                        f"{f.text} touches {book.shown(path)}, denied by {by_rule(rule)}",
                        rule.text,
                    )
        for part in analysis.parts:
            denied = self._denied_access(part, self._implied_writes(part), "Write", "writes")
            if denied is not None:
                return denied
        for part in analysis.parts:
            denied = self._denied_access(part, self._words_reaching_files(part), "Read", "reads")
            if denied is not None:
                return denied
        return None

    def _denied_access(
        self, part: CommandPart, targets: list[tuple[str, Path]], tool: str, verb: str
    ) -> tuple[str, str] | None:
        """(reason, rule) for the first of `targets` a deny rule for `tool` covers."""
        book = self.book
        for raw, cwd in targets:
            try:
                path = book.resolve(raw, cwd)
            except PathError:
                continue
            rule = book.path_rule(book.deny_rules, tool, path)
            if rule is not None:
                shown = book.shown(path)
                return f"{_show(part.argv)} {verb} {shown}, denied by {by_rule(rule)}", rule.text
        return None

    def _implied_writes(self, part: CommandPart) -> list[tuple[str, Path]]:
        return [
            (raw, cwd) for raw in implied_writes(part.argv) for cwd in part.cwd or (self.book.cwd,)
        ]

    def _protected_writes(self, analysis: BashAnalysis) -> list[str]:
        """Why a command that writes without a redirection (`tee -a ~/.bashrc`, `git config`,
        `sed -i .git/hooks/x`) must ask in every mode: it writes a protected path."""
        book = self.book
        reasons: list[str] = []
        for part in analysis.parts:
            for raw, cwd in self._implied_writes(part):
                if DYN in raw:
                    # Under the sandbox protected paths are read-only whatever the target
                    # turns out to be; without it, a target only known at run time asks.
                    if not book.kernel_enforced:
                        reasons.append(
                            f"{_show(part.argv)} writes a path only known at run time"
                        )
                    continue
                try:
                    path = book.resolve(raw, cwd)
                except PathError:
                    reasons.append(f"{_show(part.argv)} writes a path that cannot be checked")
                    continue
                why = protected_reason(path, book.home)
                if why is not None:
                    reasons.append(f"{_show(part.argv)} writes {book.shown(path)}: {why}")
        return reasons

    def _words_reaching_files(self, part: CommandPart) -> list[tuple[str, Path]]:
        """(path, cwd) for every file a part may open, for the deny rules.

        A read-only command's paths and the expansion of its globs; for any other command
        (`sed -n p .env`, `awk 1 private/x`, `curl -d @.env`) every word, `--opt=value`
        value and `@file` that names an existing file or directory: a deny rule is about
        the file, whichever program opens it.
        """
        cwds = part.cwd or (self.book.cwd,)
        ro = classify(part.argv, (), part.globbed)
        out: list[tuple[str, Path]] = []
        for cwd in cwds:
            if ro is not None:
                out += [(raw, cwd) for raw in ro.paths]
                for pattern in ro.globs:
                    out += [(m, cwd) for m in expand_glob(pattern, cwd) or [pattern]]
                continue
            out += [(raw, cwd) for raw in _existing_words(part, cwd)]
        return out

    def _part(self, part: CommandPart) -> tuple[Behavior, str | None, str, bool]:
        """(behavior, suggested rule, reason, allowed only as read-only) for one part,
        after deny/ask were checked."""
        book = self.book
        view = part.views[part.allow_view]
        text = _show(part.argv)
        # An allow-list: any variable but a few harmless ones (`LC_ALL`, `NODE_ENV`...) may
        # change what the command runs (`MAKEFLAGS`, `RIPGREP_CONFIG_PATH`, `GIT_*`).
        unsafe_env = [n for n in part.env if dangerous_env(n) or not env_is_safe((n,))]
        if not unsafe_env and book.mode != "plan":
            rule = book.first(book.allow_rules, "Bash", lambda r: bash_rule_matches(r, view))
            risky = risky_option(part.argv) if rule is not None else None
            if rule is not None and risky is not None and rule.kind != "bash_exact":
                return "ask", None, f"{text}: {risky} writes files or runs programs", False
            if rule is not None:
                # A command that is read-only as well keeps the read-only tier: should the
                # classifier be wrong, the kernel still stops the write.
                read_only = part.allow_view == -1 and self._read_only_ok(part)
                return "allow", None, f"{text}: allowed by {by_rule(rule)}", read_only
        secret = self._reads_secret(part)
        if secret is not None:
            return "ask", None, f"{text} reads {secret}, which looks like a secrets file", False
        if part.allow_view == -1 and self._read_only_ok(part):
            return "allow", None, f"{text}: read-only command inside the project", True
        if unsafe_env:
            names = ", ".join(unsafe_env)
            return "ask", None, f"{text} sets {names}, which changes what runs", False
        behavior, why = modes.bash_fallback(book.mode)
        return behavior, suggest_bash_rule(view), f"{text}: {why}", False

    def _reads_secret(self, part: CommandPart) -> str | None:
        book = self.book
        ro = classify(part.argv, (), part.globbed)
        for raw in ro.paths if ro is not None else ():
            for cwd in part.cwd or (book.cwd,):
                try:
                    path = book.resolve(raw, cwd)
                except PathError:
                    continue
                if is_secret(path) and book.path_rule(book.allow_rules, "Read", path) is None:
                    return book.shown(path)
        return None

    def _read_only_ok(self, part: CommandPart) -> bool:
        ro = classify(part.argv, part.env, part.globbed)
        if ro is None:
            return False
        if ro.git_content and self._denies_inside_project():
            return False  # history and diffs show a denied file's contents; ask
        paths = list(ro.paths)
        for pattern in ro.globs:
            if ".." in pattern.split("/") or secret_name_could_match(pattern):
                return False
            for cwd in part.cwd or (self.book.cwd,):
                matches = expand_glob(pattern, cwd)
                if matches is None:
                    return False  # too many matches, or a pattern bash reads differently
                paths += [str(cwd / m) for m in matches] or [static_prefix(pattern)]
        if not all(self._path_readable(raw, part.cwd) for raw in paths):
            return False
        # Without the sandbox's masks, a tree walk would read what deny rules name.
        return not (
            ro.recursive
            and not self.book.kernel_enforced
            and any(self._tree_holds_denied(raw, part.cwd) for raw in paths)
        )

    def _denies_inside_project(self) -> bool:
        root = self.book.project_root
        return any(is_within(d, root) or is_within(root, d) for d in self.book.read_deny_dirs())

    def _tree_holds_denied(self, raw: str, cwds: tuple[Path, ...] | None) -> bool:
        book = self.book
        for cwd in cwds or (book.cwd,):
            try:
                top = book.resolve(raw, cwd)
            except PathError:
                return True
            if any(is_within(d, top) or is_within(top, d) for d in book.read_deny_dirs()):
                return True
        return False

    def _path_readable(self, raw: str, cwds: tuple[Path, ...] | None) -> bool:
        if DYN in raw:
            return False
        if cwds is None and not raw.startswith(("/", "~")):
            return False
        for cwd in cwds or (self.book.cwd,):
            try:
                path = self.book.resolve(raw, cwd)
            except PathError:
                return False
            if self.book.read_decision("Read", path).behavior != "allow":
                return False
        return True

    def _redirect_decision(self, raw: str, write: bool, cwd: Path | None) -> Decision:
        if cwd is None and not raw.startswith(("/", "~")):
            return Decision("ask", "the directory it runs in is not known")
        try:
            path = self.book.resolve(raw, cwd or self.book.cwd)
        except PathError as e:
            return Decision("ask", f"path refused: {e}")
        if write:
            return self.book.edit_decision("Write", path)
        return self.book.read_decision("Read", path)


def _existing_words(part: CommandPart, cwd: Path) -> list[str]:
    """The words of a part (whole, `--opt=value` values, `@file`s, glob matches) that
    name an existing file or directory from `cwd`."""
    out: list[str] = []
    for index, word in enumerate(part.argv[1:], start=1):
        if DYN in word:
            continue
        candidates = [word, word.split("=", 1)[-1], word.lstrip("@")]
        if index in part.globbed:
            candidates += expand_glob(word, cwd) or []
        for raw in dict.fromkeys(candidates):
            if raw and os.path.lexists(os.path.join(cwd, os.path.expanduser(raw))):
                out.append(raw)
    return out


def _views(part: CommandPart) -> list[tuple[str, ...]]:
    """Every view of a part, plus `rm` for `/bin/rm`, so deny rules can't be dodged; and
    the `rm` a deleting command amounts to, so `Bash(rm:*)` also stops `git rm -f x`,
    `find . -delete`, `git clean -fdx` and `unlink x`."""
    out: list[tuple[str, ...]] = []
    for view in part.views:
        out.append(view)
        if view and "/" in view[0]:
            view = (view[0].rsplit("/", 1)[-1], *view[1:])
            out.append(view)
        deletion = _as_rm(view)
        if deletion is not None:
            out.append(deletion)
    return out


_GIT_OPTIONS_WITH_VALUE = ("-C", "-c", "--git-dir", "--work-tree", "--namespace")


def _as_rm(argv: tuple[str, ...]) -> tuple[str, ...] | None:
    if not argv:
        return None
    name, rest = argv[0], argv[1:]
    if name == "git":
        return _git_as_rm(rest)
    if name == "find" and any(w in ("-delete", "-fdelete") for w in rest):
        starts = [w for w in rest if not w.startswith(("-", "(", "!"))][:1]
        return ("rm", "-rf", *(starts or ["."]))
    if name in ("unlink", "shred"):
        return ("rm", *[w for w in rest if not w.startswith("-")])
    return None


def _git_as_rm(rest: tuple[str, ...]) -> tuple[str, ...] | None:
    i = 0
    while i < len(rest) and rest[i].startswith("-"):
        i += 2 if rest[i] in _GIT_OPTIONS_WITH_VALUE else 1
    sub, after = (rest[i], rest[i + 1 :]) if i < len(rest) else ("", ())
    if sub == "rm":
        return ("rm", *after)
    if sub == "clean" and any(w.startswith("-") and "f" in w for w in after):
        targets = [w for w in after if not w.startswith("-")]
        return ("rm", "-rf", *(targets or ["."]))
    return None


def _show(argv: tuple[str, ...]) -> str:
    return " ".join(shlex.quote(a.replace(DYN, "…")) if a else "''" for a in argv)
