"""How a stdio server is started: the variables it inherits and its first-start allowance.

A stdio server gets a minimal environment (the SDK's `PATH`, `HOME`, `USER`, `SHELL`,
`TERM`, `LOGNAME`) plus its entry's `env`, so the user's keys never leak to a program
that did not ask for them. Two kinds of variables are passed on anyway, because without
them a server cannot even be downloaded or reach its API behind a corporate network:
the CA bundles (`SSL_CERT_FILE`, `SSL_CERT_DIR`, `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE`,
`NODE_EXTRA_CA_CERTS`) and the proxy settings (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`,
`NO_PROXY`, in both cases). They say how to connect, not who you are (a proxy URL with a
password in it is the exception the docs mention). An entry's own `env` wins.

`npx -y pkg` and `uvx pkg` download the server on their first run, which takes far longer
than a handshake: killing them at the usual connect timeout leaves a half-written package
cache that fails again on every later start. Such launchers get a long first-start
allowance, and their status says "installing" once the normal timeout has passed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePath

PASSED_VARIABLES: tuple[str, ...] = (
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
)
"""Variables every stdio server inherits from aistack's environment when they are set."""

INSTALL_TIMEOUT = 300.0
"""Seconds a package-runner launch (`npx -y`, `uvx`, ...) may take to start the first
time: a cold download of a server and its dependencies, on a slow network."""

_RUNNERS = {"npx", "uvx", "bunx", "pnpx"}
_RUNNER_SUBCOMMANDS = {("pnpm", "dlx"), ("yarn", "dlx"), ("uv", "run"), ("pipx", "run"),
                       ("uv", "tool"), ("bun", "x"), ("npm", "exec")}


def inherited_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The CA and proxy variables of `environ` that a stdio server gets by default."""
    return {name: environ[name] for name in PASSED_VARIABLES if environ.get(name)}


def installs_on_first_run(command: str, args: Sequence[str]) -> bool:
    """True for launchers that may download the server before starting it."""
    name = PurePath(command).name.removesuffix(".cmd").removesuffix(".exe")
    if name in _RUNNERS:
        return True
    return bool(args) and (name, args[0]) in _RUNNER_SUBCOMMANDS
