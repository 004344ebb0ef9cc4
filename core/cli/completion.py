"""``ambry completion SHELL``: completion scripts generated from the parser itself.

Nothing is listed by hand: :func:`describe` walks the argparse tree (commands,
nested subcommands, options, their choices and whether they take a file or a
directory), and one writer per shell turns that into a script, so a new command
or option completes as soon as it exists.
"""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass, field

SHELLS = ("bash", "zsh", "fish")
_PATH_WORDS = ("PATH", "FILE", "DIR")


@dataclass
class Option:
    flags: list[str]
    help: str
    takes_value: bool
    choices: list[str]
    kind: str  # "file", "dir", "choice", "value" or "flag"


@dataclass
class Node:
    """One parser: its options, its subcommands, and what its positionals accept."""

    name: str
    help: str
    options: list[Option] = field(default_factory=list)
    subcommands: dict[str, Node] = field(default_factory=dict)
    words: list[str] = field(default_factory=list)  # choices of positionals
    files: bool = False  # a positional takes a path


#: A positional's words to complete where its command checks the word itself (and
#: says more than argparse's "invalid choice" would): set on the argparse action.
WORDS = "completion_words"


def _short_help(text: str | None) -> str:
    if not text or text == argparse.SUPPRESS:
        return ""
    first = re.split(r"(?<=\.)\s", text.strip(), maxsplit=1)[0].rstrip(".")
    return first.replace("%%", "%")


def _kind(action: argparse.Action) -> str:
    if action.nargs == 0:
        return "flag"
    if action.choices:
        return "choice"
    metavar = str(action.metavar or action.dest).upper()
    if "DIR" in metavar:
        return "dir"
    if any(word in metavar for word in _PATH_WORDS):
        return "file"
    return "value"


def describe(parser: argparse.ArgumentParser, name: str = "ambry", help_text: str = "") -> Node:
    node = Node(name, _short_help(help_text))
    helps: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for sub_name, sub in action.choices.items():
                node.subcommands[sub_name] = describe(sub, sub_name, helps.get(sub_name, ""))
        elif action.option_strings:
            choices = [str(c) for c in action.choices] if action.choices else []
            node.options.append(
                Option(
                    list(action.option_strings),
                    _short_help(action.help),
                    action.nargs != 0,
                    choices,
                    _kind(action),
                )
            )
        elif action.choices:
            node.words.extend(str(c) for c in action.choices)
        elif words := getattr(action, WORDS, None):
            node.words.extend(words)
        elif _kind(action) in ("file", "dir"):
            node.files = True
    return node


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    root = describe(parser)
    match shell:
        case "bash":
            return _bash(root)
        case "zsh":
            return _zsh(root)
        case "fish":
            return _fish(root)
        case _:
            raise ValueError(f"no completion for {shell!r}; use one of {', '.join(SHELLS)}")


def _walk(node: Node, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Node]]:
    out = [(path, node)]
    for name, sub in node.subcommands.items():
        out += _walk(sub, (*path, name))
    return out


# --- bash --------------------------------------------------------------------------


def _bash(root: Node) -> str:
    nodes = _walk(root)
    valued = sorted({f for _, n in nodes for o in n.options if o.takes_value for f in o.flags})
    cases = []
    for path, node in nodes:
        key = " ".join(path)
        words = [*node.subcommands, *node.words]
        opts = [f for o in node.options for f in o.flags]
        values = []
        for o in node.options:
            if not o.takes_value:
                continue
            pattern = "|".join(o.flags)
            if o.kind == "choice":
                action = f'COMPREPLY=($(compgen -W {shlex.quote(" ".join(o.choices))} -- "$cur"))'
            elif o.kind == "dir":
                action = 'COMPREPLY=($(compgen -d -- "$cur"))'
            elif o.kind == "file":
                action = 'COMPREPLY=($(compgen -f -- "$cur"))'
            else:
                action = "COMPREPLY=()"
            values.append(f"                {pattern}) {action}; return;;")
        files = "1" if node.files else "0"
        cases.append(
            f"        {shlex.quote(key)})\n"
            f'            case "$prev" in\n'
            + "".join(v + "\n" for v in values)
            + "            esac\n"
            f"            words={shlex.quote(' '.join(words))}; opts={shlex.quote(' '.join(opts))};"
            f" files={files};;\n"
        )
    word_cases = [
        f"        {shlex.quote(' '.join(p))}) echo {shlex.quote(' '.join(n.subcommands))};;\n"
        for p, n in nodes
        if n.subcommands
    ]
    return f"""# bash completion for ambry, generated by `ambry completion bash`.
# Load it with:  source <(ambry completion bash)
_ambry() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    local path="" i w words opts files
    for ((i = 1; i < COMP_CWORD; i++)); do
        w="${{COMP_WORDS[i]}}"
        case "$w" in
            {"|".join(valued)}) ((i++));;
            -*) ;;
            *) case " $(_ambry_words "$path") " in
                   *" $w "*) path="${{path:+$path }}$w";;
               esac;;
        esac
    done
    case "$path" in
{"".join(cases)}    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [[ -n "$words" ]]; then
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
    elif [[ "$files" == 1 ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}}
_ambry_words() {{
    case "$1" in
{"".join(word_cases)}    esac
}}
complete -o bashdefault -o default -F _ambry ambry
"""


# --- zsh ---------------------------------------------------------------------------


def _zsh_text(text: str) -> str:
    return text.replace("\\", "").replace("'", "'\\''").replace("[", "(").replace("]", ")")


def _zsh_spec(option: Option) -> list[str]:
    desc = _zsh_text(option.help).replace(":", "\\:")
    match option.kind:
        case "flag":
            action = ""
        case "choice":
            action = f":{option.flags[-1].lstrip('-')}:({' '.join(option.choices)})"
        case "dir":
            action = ":directory:_files -/"
        case "file":
            action = ":file:_files"
        case _:
            action = f":{option.flags[-1].lstrip('-')}:"
    return [f"'{flag}[{desc}]{action}'" for flag in option.flags]


def _zsh_function(path: tuple[str, ...], node: Node) -> str:
    fn = "_" + "_".join(("ambry", *path)).replace("-", "_")
    specs = [s for o in node.options for s in _zsh_spec(o)]
    lines = [
        f"{fn}() {{",
        '    local curcontext="$curcontext" state line',
        "    typeset -A opt_args",
    ]
    if node.subcommands:
        specs += ["'1:command:->command'", "'*::arg:->args'"]
        lines.append("    _arguments -C \\\n        " + " \\\n        ".join(specs))
        described = " ".join(
            f"'{name}:{_zsh_text(sub.help).replace(':', chr(92) + ':')}'"
            for name, sub in node.subcommands.items()
        )
        branches = "".join(
            f"                {name}) {fn}_{name.replace('-', '_')} ;;\n"
            for name in node.subcommands
        )
        lines.append(
            "    case $state in\n"
            f"        command) local -a cmds; cmds=({described});"
            " _describe -t commands 'command' cmds ;;\n"
            "        args)\n            case $line[1] in\n"
            f"{branches}            esac ;;\n    esac"
        )
    else:
        if node.words:
            specs.append(f"'*:word:({' '.join(node.words)})'")
        elif node.files:
            specs.append("'*:file:_files'")
        lines.append("    _arguments \\\n        " + " \\\n        ".join(specs))
    lines.append("}")
    return "\n".join(lines)


def _zsh(root: Node) -> str:
    functions = "\n\n".join(_zsh_function(p, n) for p, n in _walk(root))
    return f"""#compdef ambry
# zsh completion for ambry, generated by `ambry completion zsh`.
# Save it as _ambry in a folder of your $fpath, or load it with:
#   source <(ambry completion zsh)
{functions}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _ambry "$@"
else
    compdef _ambry ambry
fi
"""


# --- fish --------------------------------------------------------------------------


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_option(condition: str, option: Option) -> str:
    parts = ["complete -c ambry", f"-n {_fish_quote(condition)}"]
    for flag in option.flags:
        parts.append(f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1:]}")
    match option.kind:
        case "choice":
            parts.append(f"-x -a {_fish_quote(' '.join(option.choices))}")
        case "dir":
            parts.append("-x -a '(__fish_complete_directories)'")
        case "file":
            parts.append("-r -F")
        case "value":
            parts.append("-x")
    if option.help:
        parts.append(f"-d {_fish_quote(option.help)}")
    return " ".join(parts)


def _fish(root: Node) -> str:
    lines = [
        "# fish completion for ambry, generated by `ambry completion fish`.",
        "# Save it as ~/.config/fish/completions/ambry.fish, or: ambry completion fish | source",
        "complete -c ambry -f",
    ]
    top = " ".join(root.subcommands)
    everywhere = {f for o in root.options for f in o.flags}
    for path, node in _walk(root):
        if not path:
            here = f"not __fish_seen_subcommand_from {top}"
        else:
            here = " && ".join(f"__fish_seen_subcommand_from {p}" for p in path)
        children = " ".join([*node.subcommands, *node.words])
        if children:
            guard = here
            if node.subcommands and path:
                guard += f" && not __fish_seen_subcommand_from {' '.join(node.subcommands)}"
            for name, sub in node.subcommands.items():
                desc = f" -d {_fish_quote(sub.help)}" if sub.help else ""
                lines.append(f"complete -c ambry -n {_fish_quote(guard)} -a {name}{desc}")
            if node.words:
                lines.append(
                    f"complete -c ambry -n {_fish_quote(guard)}"
                    f" -a {_fish_quote(' '.join(node.words))}"
                )
        if node.files and path:
            lines.append(f"complete -c ambry -n {_fish_quote(here)} -F")
        if not path:
            lines += [_fish_option("true", o) for o in node.options]
        else:
            lines += [_fish_option(here, o) for o in node.options if o.flags[0] not in everywhere]
    return "\n".join(lines) + "\n"
