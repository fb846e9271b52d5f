"""Elicitation: a server asks the user to fill in a small form in the middle of a call.

The request's flat JSON schema (strings, numbers, booleans, single and multiple choice,
as the protocol allows) becomes a tuple of `FormField`s that every front end draws its
own way: a dialog in the TUI, one question per field in the line mode. `FormField.parse`
turns what the user typed into the value the schema asks for, so both validate the same.
Where nobody can answer (print mode, an editor or chat channel that has no form), the
`DeclineElicitation` handler declines and the reason is logged, shown as a notice and
added to the tool's result, so the model knows why the server got no answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from aistack_tui.json_values import as_list, as_object

FieldKind: TypeAlias = Literal["string", "integer", "number", "boolean", "choice", "multi"]
ElicitAction: TypeAlias = Literal["accept", "decline", "cancel"]
FormValue: TypeAlias = str | int | float | bool | list[str] | None
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TRUE = {"y", "yes", "true", "1", "on"}
_FALSE = {"n", "no", "false", "0", "off"}


@dataclass(frozen=True, slots=True)
class FormField:
    """One field of an elicitation form, as the server described it."""

    name: str
    title: str
    kind: FieldKind
    description: str = ""
    required: bool = False
    default: FormValue = None
    choices: tuple[tuple[str, str], ...] = ()
    """(value, label) for `choice` and `multi`."""
    format: str = ""
    minimum: float | None = None
    maximum: float | None = None

    def parse(self, text: str) -> FormValue:
        """The value for what the user typed; raises ValueError saying what is wrong.

        An empty answer means the default, or nothing for an optional field."""
        text = text.strip()
        if not text:
            if self.default is not None:
                return self.default
            if self.required:
                raise ValueError(f"{self.title} is required")
            return None
        if self.kind == "boolean":
            if text.lower() in _TRUE:
                return True
            if text.lower() in _FALSE:
                return False
            raise ValueError(f"{self.title}: answer yes or no")
        if self.kind in ("integer", "number"):
            try:
                number: float = int(text) if self.kind == "integer" else float(text)
            except ValueError:
                whole = "a whole" if self.kind == "integer" else "a"
                raise ValueError(f"{self.title}: expected {whole} number") from None
            if self.minimum is not None and number < self.minimum:
                raise ValueError(f"{self.title}: at least {self.minimum:g}")
            if self.maximum is not None and number > self.maximum:
                raise ValueError(f"{self.title}: at most {self.maximum:g}")
            return number
        if self.kind == "choice":
            return self._choice(text)
        if self.kind == "multi":
            return [self._choice(part) for part in text.split(",") if part.strip()]
        if self.format == "email" and not _EMAIL.match(text):
            raise ValueError(f"{self.title}: not an email address")
        if self.format == "date" and not _DATE.match(text):
            raise ValueError(f"{self.title}: a date as YYYY-MM-DD")
        if self.format in ("uri", "url") and "://" not in text:
            raise ValueError(f"{self.title}: a URL such as https://example.com")
        return text

    def _choice(self, text: str) -> str:
        text = text.strip()
        for index, (value, label) in enumerate(self.choices, 1):
            if text in (value, label, str(index)):
                return value
        options = ", ".join(label for _, label in self.choices)
        raise ValueError(f"{self.title}: one of {options}")


@dataclass(frozen=True, slots=True)
class ElicitationRequest:
    """A server's question: its message and the form to fill in."""

    server: str
    message: str
    fields: tuple[FormField, ...]
    schema: dict[str, Any] = field(default_factory=dict[str, Any])


@dataclass(frozen=True, slots=True)
class ElicitationAnswer:
    """accept (with `content`), decline or cancel; `reason` says why nobody answered."""

    action: ElicitAction
    content: dict[str, FormValue] | None = None
    reason: str = ""


class ElicitationHandler(Protocol):
    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer: ...


class DeclineElicitation:
    """The answer where nobody can fill in a form: declined, with the reason."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        return ElicitationAnswer("decline", reason=self.reason)


NO_ONE_TO_ASK = (
    "this session has no one to answer questions (print mode or a client without "
    "forms), so aistack declined it"
)


def _choices(prop: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    options = as_list(prop.get("oneOf")) or as_list(prop.get("anyOf"))
    if options:
        pairs: list[tuple[str, str]] = []
        for option in options:
            item = as_object(option)
            if item is not None and "const" in item:
                pairs.append((str(item["const"]), str(item.get("title") or item["const"])))
        return tuple(pairs)
    values = [str(v) for v in as_list(prop.get("enum")) or []]
    names = [str(n) for n in as_list(prop.get("enumNames")) or []]
    return tuple((v, names[i] if i < len(names) else v) for i, v in enumerate(values))


def _field(name: str, prop: dict[str, Any], required: bool) -> FormField:
    kind: FieldKind
    raw_type = prop.get("type")
    items = as_object(prop.get("items")) or {}
    choices = _choices(prop)
    if raw_type == "array":
        kind, choices = "multi", _choices(items)
    elif choices:
        kind = "choice"
    elif raw_type in ("integer", "number", "boolean"):
        kind = raw_type
    else:
        kind = "string"
    default = prop.get("default")
    if isinstance(default, list):
        default = [str(v) for v in as_list(default) or []]
    elif not isinstance(default, str | int | float | bool):
        default = None
    minimum, maximum = prop.get("minimum"), prop.get("maximum")
    return FormField(
        name=name,
        title=str(prop.get("title") or name),
        kind=kind,
        description=str(prop.get("description") or ""),
        required=required,
        default=default,
        choices=choices,
        format=str(prop.get("format") or ""),
        minimum=float(minimum) if isinstance(minimum, int | float) else None,
        maximum=float(maximum) if isinstance(maximum, int | float) else None,
    )


def form_fields(schema: dict[str, Any]) -> tuple[FormField, ...]:
    """The fields of a requested schema, in the server's order."""
    props = as_object(schema.get("properties")) or {}
    required = {str(r) for r in as_list(schema.get("required")) or []}
    fields: list[FormField] = []
    for name, prop in props.items():
        as_dict = as_object(prop)
        if as_dict is not None:
            fields.append(_field(name, as_dict, name in required))
    return tuple(fields)
