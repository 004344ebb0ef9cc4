"""The tool manifest (``resources/manifest.json``): the one source of tool schemas.

Every agent tool call, through the socket or MCP, is validated here with
jsonschema before the service sees it. Each tool also carries what MCP shows a
model: a title, behaviour hints (``annotations``) and the schema of its result.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

from core.model.errors import InvalidParams, NotFound
from core.model.text import check_unicode

if TYPE_CHECKING:
    import jsonschema
    from jsonschema import Draft202012Validator


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    schema: dict[str, Any]
    title: str = ""
    #: MCP's behaviour hints: readOnlyHint, destructiveHint, idempotentHint, openWorldHint.
    annotations: dict[str, bool] = field(default_factory=dict)
    #: JSON Schema of the result object (MCP's ``outputSchema``).
    result_schema: dict[str, Any] = field(default_factory=dict)

    @functools.cached_property
    def validator(self) -> Draft202012Validator:
        """Built at the first call: jsonschema takes 50 ms to import, and ``ambry mcp``
        must answer ``initialize`` quickly. The schemas are checked by a test."""
        from jsonschema import Draft202012Validator

        Draft202012Validator.check_schema(self.schema)
        return Draft202012Validator(self.schema)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "title": self.title,
            "arguments_schema": copy.deepcopy(self.schema),
            "result_schema": copy.deepcopy(self.result_schema),
            "annotations": dict(self.annotations),
        }


def read_resource(name: str) -> str:
    """Text of a file under ``resources/`` (works from a wheel and frozen)."""
    return resources.files("resources").joinpath(name).read_text(encoding="utf-8")


@functools.cache
def load_manifest() -> dict[str, Tool]:
    raw = json.loads(read_resource("manifest.json"))
    tools: dict[str, Tool] = {}
    for item in raw["tools"]:
        tools[item["name"]] = Tool(
            name=item["name"],
            description=item["description"],
            schema=item["arguments_schema"],
            title=item.get("title", ""),
            annotations=item.get("annotations", {}),
            result_schema=item.get("result_schema", {}),
        )
    return tools


def tool_maximum(tool: str, argument: str) -> int:
    """The largest value the agent tool ``tool`` takes for ``argument`` (its schema's
    ``maximum``): a command that reads the same list stops where the tool does."""
    return int(load_manifest()[tool].schema["properties"][argument]["maximum"])


def error_field(error: jsonschema.ValidationError) -> str:
    """The dotted name of the field ``error`` is about (a missing one named too)."""
    path = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else ""
        return f"{path}.{missing}".strip(".") or "(arguments)"
    if error.validator == "additionalProperties":
        # The first unknown argument, as precise as a missing one.
        schema: Any = error.schema
        instance: Any = error.instance
        extra = sorted(set(instance) - set(schema.get("properties", {})))
        name = extra[0][:64] if extra else ""
        return f"{path}.{name}".strip(".") or "(arguments)"
    return path or "(arguments)"


#: The pattern of a tag: filters split a list of tags at commas.
NO_COMMA = "^[^,]*$"


def describe_error(error: jsonschema.ValidationError) -> str:
    """What is wrong with the field, in words that never quote its value: a refusal is
    shown, and logged, and the value may be a memory's content."""
    rule = error.validator
    value: Any = error.validator_value
    match rule:
        case "maxLength":
            return f"must be at most {value} characters"
        case "minLength":
            return "must not be empty" if value == 1 else f"must be at least {value} characters"
        case "maxItems":
            return f"must have at most {value} items"
        case "minItems":
            return f"must have at least {value} item" + ("" if value == 1 else "s")
        case "pattern" if value == NO_COMMA:
            return "must not hold a comma (tags are filtered as a list split at commas)"
        case "pattern":
            return f"must match the pattern {value}"
        case "maximum":
            return f"must be at most {value}"
        case "minimum":
            return f"must be at least {value}"
        case "enum":
            return "must be one of " + ", ".join(map(str, value))
        case "type":
            kinds = value if isinstance(value, list) else [value]
            return "must be of type " + " or ".join(kinds)
        case "required":
            return "is required"
        case "const":
            return f"must be {value!r}"
        case "oneOf":
            names = [" and ".join(s.get("required", ())) for s in value]
            return "must have exactly one of " + " or ".join(n for n in names if n)
        case _:
            return f"breaks the rule {rule}"


#: The pattern an id-valued argument carries beside ``minLength``: not only white space.
NOT_BLANK: Final = r"\S"


def _is_blank(error: jsonschema.ValidationError) -> bool:
    """An empty or blank string where the schema wants a value (an id, a thread)."""
    blank_rule = error.validator == "minLength" or (
        error.validator == "pattern" and error.validator_value == NOT_BLANK
    )
    return blank_rule and isinstance(error.instance, str) and not error.instance.strip()


def _what_to_give(tool: Tool, error: jsonschema.ValidationError) -> str:
    """What the refused string should have been, from the first clause of its
    description (": give the entry's id (mem-...), from memory_search or the
    brief"), and for an optional argument that it may be left out (or be null).
    Empty when the field has no description."""
    schema: Any = error.schema
    described = re.split(r"\. |: ", str(schema.get("description") or ""))[0].rstrip(".")
    if not described:
        return ""
    hint = f": give {described[:1].lower()}{described[1:]}"
    path = list(error.absolute_path)
    # Only a top-level argument: a member of an object in a list (a claim's source)
    # may be needed by the object's kind although the schema does not require it.
    if len(path) == 1 and path[0] not in tool.schema.get("required", ()):
        nullable = "null" in (schema.get("type") or ())
        hint += ", or leave it out" + (" (or pass null)" if nullable else "")
    return hint


def _unknown_arguments(error: jsonschema.ValidationError) -> str:
    """Which arguments are unknown and which the object takes, so the caller can fix a typo."""
    schema: Any = error.schema
    instance: Any = error.instance
    known = list(schema.get("properties", {}))
    extra = sorted(set(instance) - set(known))
    where = ".".join(str(p) for p in error.absolute_path)
    found = ("unknown argument(s): " if not where else f"{where}: unknown member(s): ") + (
        ", ".join(repr(k[:64]) for k in extra[:5]) + (", …" if len(extra) > 5 else "")
    )
    return f"{found}; allowed: {', '.join(known)}" if known else f"{found}; it takes none"


def _refuse_lone_surrogates(value: Any, field: str) -> None:
    """Refuse a string no UTF-8 database can hold: one with a lone surrogate, as
    bytes that are not UTF-8 decode to (a command-line argument, say). The schema
    has bounded the nesting already."""
    match value:
        case str():
            check_unicode(value, field)
        case list():
            for item in value:
                _refuse_lone_surrogates(item, field)
        case dict():
            for key, item in value.items():
                _refuse_lone_surrogates(key, field)
                _refuse_lone_surrogates(item, f"{field}.{key}")
        case _:
            pass


def validate_args(tool_name: str, args: Any) -> dict[str, Any]:
    """Validate ``args`` for ``tool_name``; return them with schema defaults filled in.

    Raises:
        NotFound: no such tool.
        InvalidParams: naming the field and the rule it broke.
    """
    tools = load_manifest()
    tool = tools.get(tool_name)
    if tool is None:
        raise NotFound(f"unknown tool {tool_name!r}; known: {', '.join(sorted(tools))}")
    if args is None:
        args = {}
    from jsonschema.exceptions import best_match

    error = best_match(tool.validator.iter_errors(args))
    if error is not None:
        name, rule = error_field(error), str(error.validator)
        if error.validator == "additionalProperties":
            message = f"{tool_name}: {_unknown_arguments(error)}"
        elif _is_blank(error):
            # "" as an id says what goes there, not "no such entry" from a lookup of
            # nothing; white space alone is refused the same way (as a blank tag is).
            empty = "empty" if error.instance == "" else "only white space"
            message = f"{tool_name}: {name} must not be {empty}{_what_to_give(tool, error)}"
            rule = "minLength"
        elif error.validator == "minLength":
            message = f"{tool_name}: {name} {describe_error(error)}{_what_to_give(tool, error)}"
        else:
            message = f"{tool_name}: {name} {describe_error(error)}"
        raise InvalidParams(message, field=name, rule=rule)
    for name, value in args.items():
        _refuse_lone_surrogates(value, name)
    filled = dict(args)
    for name, prop in tool.schema.get("properties", {}).items():
        if name not in filled and "default" in prop:
            filled[name] = copy.deepcopy(prop["default"])
    return filled
