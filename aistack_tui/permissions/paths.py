"""Path safety: resolve before comparing, compare by components, reject what can't be read.

Every escape other agents shipped came from comparing strings: `/srv/app-evil` starts with
`/srv/app`, `src/../../etc` starts with `src`, a symlink inside the project points out of
it. So a path is first rejected if it carries NUL or control characters, then `~` is
expanded, it is joined to the working directory and `os.path.realpath` resolves `..` and
symlinks; only then is it compared, with `Path.is_relative_to`, which works on components.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import pathspec

from aistack_tui.permissions.lazy_re import lazy

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

# Files whose contents are credentials: reading them asks even where reads are allowed.
# Matched (gitignore syntax) against a path's last one to three components, so a pattern
# with a directory (`.aws/credentials`, `gh/hosts.yml`) is found under any home or root.
SECRET_PATTERNS: tuple[str, ...] = (
    ".env*",  # as documented: .env, .env.local, .env-production, .env~, .envrc
    ".pgpass",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".aws/credentials",
    ".aws/config",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".docker/config.json",
    ".kube/config",
    ".ssh/*",
    ".gnupg/**",
    "credentials.json",  # aistack's own, and many a service account's
    "*.tfvars",
    ".htpasswd",
    # cloud command lines
    "application_default_credentials.json",  # gcloud
    "gcloud/credentials.db",
    "gcloud/access_tokens.db",
    "legacy_credentials/**",  # gcloud, per account
    ".azure/**",
    ".oci/config",
    "doctl/config.yaml",
    "credentials.tfrc.json",  # terraform login
    ".config/hub",
    "gh/hosts.yml",
    # other agents' logins
    ".credentials.json",  # Claude Code
    ".codex/auth.json",
    ".gemini/oauth_creds.json",
    "github-copilot/*.json",
)


def _secret_source() -> str:
    # One alternation instead of pathspec's per-pattern loop: this runs on every path check.
    spec = pathspec.PathSpec.from_lines("gitwildmatch", SECRET_PATTERNS)
    return "|".join(
        re.sub(r"\(\?P<\w+>", "(?:", p.regex.pattern)  # type: ignore[attr-defined]
        for p in spec.patterns
        if getattr(p, "regex", None) is not None
    )


_SECRET_RE = lazy(_secret_source)  # compiled on the first path check, not at import

# Directory names whose contents steer the tools themselves: writes ask in every mode.
PROTECTED_DIRS: frozenset[str] = frozenset({".git", ".aistack", ".claude", ".agents"})
# Shell start-up files run code in every later shell; files in a project that the next
# session (or direnv) runs. Writing any of them asks in every mode; the sandbox keeps them
# read-only too (sandbox/policy.py builds its lists from these).
SHELL_STARTUP_FILES: tuple[str, ...] = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".inputrc",
)
PROJECT_RUN_FILES: tuple[str, ...] = (".mcp.json", ".envrc")
PROTECTED_FILES: frozenset[str] = frozenset(SHELL_STARTUP_FILES + PROJECT_RUN_FILES)
# Configuration under the user's home that later runs code, steers a program the user runs,
# or holds another program's credentials: git, ssh, the Python user site and `~/.local/bin`
# (on PATH), user services, editors, package managers' indexes, other agents. Protected
# whatever the project root is (also when the project *is* the home directory): writes ask
# in every mode and the sandbox keeps them read-only.
HOME_CONFIG_PATHS: tuple[str, ...] = (
    ".gitconfig",
    ".config/git",
    ".ssh",
    ".gnupg",
    ".local/bin",
    ".local/lib",
    ".config/systemd",
    ".config/autostart",
    ".config/environment.d",
    ".pam_environment",
    ".config/fish",
    ".vimrc",
    ".config/nvim",
    ".emacs",
    ".emacs.d",
    ".tmux.conf",
    ".config/tmux",
    ".config/pip",
    ".pip",
    ".npmrc",
    ".pypirc",
    ".cargo/config",
    ".cargo/config.toml",
    ".cargo/bin",
    ".docker",
    ".kube",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".netrc",
    ".git-credentials",
    ".claude",
    ".claude.json",
    ".codex",
    ".gemini",
    ".aistack",
    ".agents",
    ".config/direnv",
)

# Device paths a redirect may target without that being a file write.
HARMLESS_DEVICES: frozenset[str] = frozenset(
    {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"}
)


class PathError(ValueError):
    """A path the engine refuses to reason about (control characters, `~user`, empty)."""


def resolve_path(raw: str, cwd: Path, home: Path) -> Path:
    """The absolute, symlink-free path `raw` names when used from `cwd`.

    Raises PathError for input that must never be guessed at; callers turn that into ask.
    """
    if not raw:
        raise PathError("empty path")
    if _CONTROL.search(raw):
        raise PathError("path contains control characters")
    if raw == "~" or raw.startswith("~/"):
        raw = str(home) + raw[1:]
    elif raw.startswith("~"):
        raise PathError(f"cannot resolve {raw!r} (another user's home)")
    joined = os.path.join(str(cwd), raw)
    return Path(os.path.realpath(joined))


def real(path: Path) -> Path:
    """A root directory as the comparisons need it: absolute and symlink-free."""
    return Path(os.path.realpath(os.path.expanduser(str(path))))


def is_within(path: Path, root: Path) -> bool:
    """True when `path` is `root` or below it, compared component by component."""
    parts, root_parts = path.parts, root.parts
    return parts[: len(root_parts)] == root_parts


def within_any(path: Path, roots: Iterable[Path]) -> bool:
    return any(is_within(path, root) for root in roots)


def is_secret(path: Path) -> bool:
    """Whether `path` looks like a credentials file (matched on its trailing components)."""
    return secret_parts(path.parts[1:] if path.is_absolute() else path.parts)


def secret_parts(parts: Sequence[str]) -> bool:
    """`is_secret` for a path already split into its components: the index checks every
    file of a tree, and building a `Path` for each cost more than the match itself."""
    # Match the last one to three components, so `.aws/credentials` and `.ssh/id_rsa` are
    # found wherever they live.
    return any(_SECRET_RE.match("/".join(parts[-k:])) for k in range(1, min(3, len(parts)) + 1))


def secret_name_could_match(pattern: str) -> bool:
    """Whether a shell glob's last component could expand to a credentials file name."""
    import fnmatch

    samples = (
        ".env",
        ".env.local",
        ".env-production",
        ".env~",
        ".envrc",
        ".pgpass",
        "application_default_credentials.json",
        "credentials.tfrc.json",
        ".credentials.json",
        "oauth_creds.json",
        "id_rsa",
        "id_ed25519",
        "server.pem",
        "tls.key",
        "credentials",
        ".netrc",
        ".npmrc",
        "cert.p12",
        "prod.tfvars",
    )
    last = pattern.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(name, last) for name in samples)


def home_config_reason(path: Path, home: Path) -> str | None:
    """Why `path` is the user's home configuration (HOME_CONFIG_PATHS), or None."""
    if not is_within(path, home) or path == home:
        return None
    rel = path.relative_to(home).as_posix()
    for entry in HOME_CONFIG_PATHS:
        if rel == entry or rel.startswith(entry + "/"):
            return f"~/{entry} is your home configuration; writing it always asks"
    return None


def protected_reason(path: Path, home: Path | None = None) -> str | None:
    """Why a write to `path` must always ask, or None (`home`: also the user's home
    configuration, whatever the project root is)."""
    if home is not None:
        why = home_config_reason(path, home)
        if why is not None:
            return why
    for part in path.parts[:-1]:
        if part in PROTECTED_DIRS:
            return f"writes inside {part}/ always ask"
    if path.name in PROTECTED_DIRS:
        return f"writes to {path.name} always ask"
    if path.name in PROTECTED_FILES:
        return f"{path.name} runs code in later shells or sessions; writing it always asks"
    if "fish" in path.parts and path.name == "config.fish":
        return "config.fish runs in every new fish shell; writing it always asks"
    return None


def display_path(path: Path, root: Path, home: Path) -> str:
    """A short form for messages and rules: `./rel` in the project, `~/rel` at home."""
    if is_within(path, root):
        rel = path.relative_to(root).as_posix()
        return "./" + rel if rel != "." else "."
    if is_within(path, home):
        rel = path.relative_to(home).as_posix()
        return "~/" + rel if rel != "." else "~"
    return path.as_posix()


_RULE_UNSAFE = re.compile(r"[*?\[\]\\!#\s()]")


def rule_path(path: Path, root: Path, home: Path, *, tree: bool) -> str | None:
    """The specifier of a path rule naming `path` (or its subtree), None if it can't be
    written without escaping."""
    shown = display_path(path, root, home)
    if _RULE_UNSAFE.search(shown):
        return None
    if tree:
        if shown in (".", "~"):
            return shown + "/**"
        return shown.rstrip("/") + "/**"
    return shown


MAX_GLOB_MATCHES = 1000


def expand_glob(pattern: str, cwd: Path) -> list[str] | None:
    """What bash would expand an unquoted glob to, from `cwd` (default shell options).

    Matches are returned as written relative to `cwd` (absolute patterns stay absolute);
    an empty list when nothing matches (bash then passes the word on unchanged). None when
    the answer cannot be trusted: more than `MAX_GLOB_MATCHES` matches, or a pattern that
    Python's glob reads differently from bash (`[^...]`, extended globs).
    """
    import glob as globlib

    unreadable = ("[^", "{", "}", "@(", "+(", "!(", "?(", "*(")
    if any(s in pattern for s in unreadable) or pattern.count("[") != pattern.count("]"):
        return None
    try:
        found = globlib.glob(pattern, root_dir=str(cwd))
    except (OSError, ValueError, re.error):
        return None
    if len(found) > MAX_GLOB_MATCHES:
        return None
    return sorted(found)
