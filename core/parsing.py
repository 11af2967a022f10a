"""Parsing every command line: transformers' `HfArgumentParser` over a command's argument dataclasses, configured
for people (`CommandParser`), and for a command that takes both kinds of task, one help and a refusal of either
kind's options for the other (`TaskKindParser`). An options file combines with flags: `python -m finetune
opts.json --max-steps 3` takes the file's options, then the flags, which override them (`options_file_flags`).
Nothing here imports TensorFlow or transformers' model code (the package itself loads its modules lazily), so
`--help` and a refused option answer in well under two seconds.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

from transformers import HfArgumentParser
from transformers.hf_argparser import string_to_bool

from core import task_kinds
from core.args import OptionsError
from core.task_kinds import CLASSIFICATION, TRANSLATION, TaskKind

OPTIONS_FILE_NOTE = (
    "Options can also come from a JSON file given first, {prog} OPTIONS.json [flags]: one object of option names "
    "(with - or _) and values, true or false for a flag; flags after the file override it."
)


class HelpFormatter(argparse.HelpFormatter):
    """Each default shown once: after the help, unless the help already speaks of it, and never for a flag or an
    option that is unset by default. Lines break between words only (`--max-steps` stays whole), and paragraphs
    of the description and epilog stay apart."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = (" ".join(part.split()) for part in text.split("\n\n"))
        return "\n\n".join(
            textwrap.fill(part, width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False)
            for part in paragraphs
        )

    def _get_help_string(self, action: argparse.Action) -> str:
        help_text = action.help or ""
        default = action.default
        if default in (None, argparse.SUPPRESS, "", []) or isinstance(default, bool) or "default" in help_text:
            return help_text
        shown = " ".join(map(str, default)) if isinstance(default, list) else str(default)
        return f"{help_text} (default: {shown.replace('%', '%%')})"


class _FieldOptions:
    """Stands in for the parser (or group) that `HfArgumentParser` adds one field's options to, and reshapes them:
    dashed spellings only, booleans as flags, `positional` fields as positional arguments."""

    def __init__(self, parser: Any):
        self.parser = parser

    def add_argument(self, *names: str, **kwargs: Any) -> None:
        names = tuple(name for name in names if "_" not in name)  # --train-file, not --train_file
        if kwargs.pop("positional", False):
            dest = names[0].removeprefix("--").replace("-", "_")
            kwargs.pop("required", None)
            self.parser.add_argument(dest, metavar=dest.upper(), **kwargs)
        elif kwargs.get("type") is string_to_bool:  # a boolean field: `--name`, and `--no-name` beside it
            # Only the spelling that changes the default is shown; the other stays accepted, for options files.
            on = bool(kwargs.get("default"))
            shown = argparse.SUPPRESS if on else kwargs.get("help")
            self.parser.add_argument(*names, action="store_true", default=on, help=shown)
            if not on:  # HfArgumentParser adds the `--no-name` of a field that is on by default itself
                dest = names[0].removeprefix("--").replace("-", "_")
                self.parser.add_argument(
                    f"--no-{names[0][2:]}", action="store_false", dest=dest, help=argparse.SUPPRESS
                )
        elif kwargs.get("action") == "store_false":  # the `--no-name` flag of a boolean that is on by default
            self.parser.add_argument(*names, **{**kwargs, "default": True})
        else:
            self.parser.add_argument(*names, **kwargs)


class CommandParser(HfArgumentParser):
    """`HfArgumentParser` for people.

    - `usage: python -m finetune ...` (`prog`; by default how this process was started), shortened to the
      positional and required arguments;
    - options spelled with dashes (an underscore spelling is still read: `--max_length` is `--max-length`);
    - each default shown once (`HelpFormatter`); a field's `choices` (metadata) listed and checked;
    - a boolean is a flag: `--overwrite`, or for one that is on by default `--no-onnx`, whose help (the field's)
      says what it turns off; the other spelling stays accepted, for options files;
    - `"positional": True` in a field's metadata makes it a positional argument (`RUN_DIR`);
    - a dataclass's `_argument_group_name` titles its group of options;
    - abbreviations are refused (`--max-step` is not `--max-steps`);
    - an error raises `OptionsError` (one `error:` line and status 2 in `run_command`), not a usage dump.
    """

    def __init__(
        self,
        dataclass_types: tuple[type, ...] = (),
        prog: str | None = None,
        description: str | None = None,
        epilog: str | None = None,
    ):
        prog = prog or default_prog()
        note = OPTIONS_FILE_NOTE.format(prog=prog)
        super().__init__(
            dataclass_types,
            prog=prog,
            description=description,
            epilog=f"{epilog}\n\n{note}" if epilog else note,
            formatter_class=HelpFormatter,
            allow_abbrev=False,
        )
        self.usage = self.short_usage()

    @staticmethod
    def _parse_dataclass_field(parser: Any, field: Any) -> None:
        HfArgumentParser._parse_dataclass_field(_FieldOptions(parser), field)

    def _get_formatter(self) -> argparse.HelpFormatter:
        return self.formatter_class(prog=self.prog, max_help_position=32)

    def short_usage(self) -> str:
        """`%(prog)s [-h] RUN_DIR --output-dir OUTPUT_DIR [options]`: the arguments a command cannot do without."""
        needed = [action for action in self._actions if not action.option_strings or action.required]
        words = ["%(prog)s [-h]"]
        if {"--task", "--train-file"} <= set(self._option_string_actions):  # the data: exactly one of them
            words.append("(--task TASK | --train-file TRAIN_FILE)")
        for action in needed:
            metavar = action.metavar or action.dest.upper()
            words.append(f"{action.option_strings[0]} {metavar}" if action.option_strings else metavar)
        if any(action.option_strings and not action.required and action.dest != "help" for action in self._actions):
            words.append("[options]")
        return " ".join(words)

    def error(self, message: str):
        raise OptionsError(f"{message} (see {self.prog} --help)")

    def parse(self, argv: list[str]) -> tuple[Any, ...]:
        """The command line (or an options file and flags) as the dataclasses, each checked by its `__post_init__`.

        Raises:
            OptionsError: naming the unknown option or bad value.
        """
        try:
            *parsed, unknown = self.parse_args_into_dataclasses(
                args=expanded_argv(argv), return_remaining_strings=True, look_for_args_file=False
            )
        except OptionsError:
            raise
        except ValueError as error:  # a dataclass's __post_init__ refused a value
            raise OptionsError(str(error)) from None
        if unknown:
            self.error(f"unrecognized arguments: {' '.join(unknown)}")
        return tuple(parsed)


class TaskKindParser(CommandParser):
    """One command line for both kinds of task: classification, and translation (`--task pt_en`, or own files with
    `--source-column`), each parsed into its own dataclasses (`kinds`).

    The help lists the options both kinds take alike in their groups (data, run, model ...), then the
    classification options, then the translation options, each group with its own kind's version of an option
    that differs between them (`--task`, `--preset`, ...). An option of the other kind is refused by name.
    """

    def __init__(
        self,
        kinds: dict[TaskKind, tuple[type, ...]],
        prog: str | None = None,
        description: str | None = None,
        epilog: str | None = None,
    ):
        super().__init__((), prog=prog, description=description, epilog=epilog)
        self.kinds = {kind: CommandParser(types, prog=self.prog) for kind, types in kinds.items()}
        ours, theirs = (_options(self.kinds[kind]) for kind in (CLASSIFICATION, TRANSLATION))
        alike = {key for key in ours if key in theirs and _same(ours[key], theirs[key])}
        self.sections: dict[str, list[argparse.Action]] = {"options": [self._actions[0]]}  # -h, --help
        for group in self.kinds[CLASSIFICATION]._action_groups:
            shown = [action for action in group._group_actions if _key(action) in alike]
            self.sections.setdefault(group.title, []).extend(shown)
        self.sections[CLASSIFICATION.option_words.format(s="s")] = [
            action for key, action in ours.items() if key not in alike
        ]
        self.sections[TRANSLATION.option_words.format(s="s")] = [
            action for key, action in theirs.items() if key not in alike
        ]
        self.only = {
            CLASSIFICATION: {a.dest for a in ours.values()} - {a.dest for a in theirs.values()},
            TRANSLATION: {a.dest for a in theirs.values()} - {a.dest for a in ours.values()},
        }
        # Every option once, with no default: parsing a command line gives back just the options it holds.
        for key, action in {**theirs, **ours}.items():
            given = copy.copy(action)
            given.default = argparse.SUPPRESS
            given.required = action.required and key in ours and key in theirs
            if key in ours and key in theirs and ours[key].choices and theirs[key].choices:
                given.choices = [*ours[key].choices, *(c for c in theirs[key].choices if c not in ours[key].choices)]
            self._add_action(given)
        self.usage = self.short_usage()

    def format_help(self) -> str:
        formatter = self._get_formatter()
        formatter.add_usage(self.usage, self._actions, [])
        formatter.add_text(self.description)
        for title, actions in self.sections.items():
            if actions:
                formatter.start_section(title)
                formatter.add_arguments(actions)
                formatter.end_section()
        formatter.add_text(self.epilog)
        return formatter.format_help()

    def parse_kind(self, argv: list[str]) -> tuple[TaskKind, tuple[Any, ...]]:
        """The kind of task the command line names, and the command line parsed into that kind's dataclasses.

        Raises:
            OptionsError: an unknown option or bad value, or an option of the other kind, named.
        """
        argv = expanded_argv(argv)
        given = vars(self.parse_args(argv))
        kind = task_kinds.named_by(given)
        other = next(task for task in self.kinds if task is not kind)
        wrong = [dest for dest in given if dest in self.only[other]]
        if wrong:
            raise OptionsError(self.wrong_kind(wrong, kind, given))
        return kind, self.kinds[kind].parse(argv)

    def wrong_kind(self, dests: list[str], kind: TaskKind, given: dict[str, Any]) -> str:
        """`--beam is a translation option (with --task pt_en ...), but --task sst2 is a classification task; ...`"""
        names = ", ".join(self._flag(dest) for dest in dests)
        one = len(dests) == 1
        other = next(task for task in self.kinds if task is not kind)
        what = other.option_words.format(s="" if one else "s")
        task = f"--task {given['task']}" if given.get("task") else kind.own_files
        return (
            f"{names} {'is a' if one else 'are'} {what}, but {task} is a {kind.name} task; "
            f"leave {'it' if one else 'them'} out (see {self.prog} --help)."
        )

    def _flag(self, dest: str) -> str:
        shown = [a for a in self._actions if a.dest == dest and a.help != argparse.SUPPRESS]
        return (shown or [a for a in self._actions if a.dest == dest])[0].option_strings[0]


def _key(action: argparse.Action) -> str:
    return action.option_strings[0] if action.option_strings else action.dest


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {_key(action): action for action in parser._actions if action.dest != "help"}


def _same(one: argparse.Action, other: argparse.Action) -> bool:
    fields = ("option_strings", "dest", "help", "default", "choices", "nargs", "type", "const")
    return all(getattr(one, name) == getattr(other, name) for name in fields)


def default_prog() -> str:
    """How this process was started: `python -m <package>` or `python <script>`."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name:
        return f"python -m {spec.name.removesuffix('.__main__')}"
    return f"python {os.path.basename(sys.argv[0])}"


def expanded_argv(argv: list[str]) -> list[str]:
    """`argv` with a leading options file spelled out as flags before the rest, and underscores in option names
    read as dashes (`--max_length 64` is `--max-length 64`)."""
    argv = list(argv)
    if argv and argv[0].endswith(".json"):
        argv = [*options_file_flags(argv[0]), *argv[1:]]
    return [_dashed(arg) for arg in argv]


def _dashed(arg: str) -> str:
    name, equals, value = arg.partition("=")
    if name.startswith("--") and "_" in name and name[2:].replace("_", "").replace("-", "").isalnum():
        return name.replace("_", "-") + equals + value
    return arg


def options_file_flags(path: str | Path) -> list[str]:
    """The flags an options file holds.

    The file holds one object of option names (with `_` or `-`) and values: `{"task": "sst2", "max_length": 64,
    "names": ["a", "b"], "overwrite": true, "onnx": false}`. A null value keeps the option's default; true and
    false turn a flag on (`--overwrite`) and off (`--no-onnx`). Going through the command line's own parser gives
    the file the same type conversion, checks and error messages.

    >>> import json, tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
    ...     json.dump({"task": "sst2", "max_length": 64, "runs": ["a", "b"], "verbose": True, "onnx": False,
    ...                "seed": None}, handle)
    >>> options_file_flags(handle.name)
    ['--task', 'sst2', '--max_length', '64', '--runs', 'a', 'b', '--verbose', '--no-onnx']
    >>> os.remove(handle.name)
    """
    path = Path(path)
    example = 'for example {"task": "sst2", "output_dir": "runs/x"}'
    try:
        options = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise OptionsError(f"cannot read the options file {path}: {error.strerror or error}.") from None
    except ValueError as error:
        raise OptionsError(f"the options file {path} is not valid JSON ({error}); {example}.") from None
    if not isinstance(options, dict):
        raise OptionsError(f"the options file {path} must hold one JSON object of options, {example}.")
    flags = []
    for key, value in options.items():
        if value is None:
            continue
        if isinstance(value, dict):
            raise OptionsError(
                f"{path}: the option {key!r} holds an object; give a string, number, true/false or list."
            )
        if isinstance(value, bool):
            flags.append(f"--{key}" if value else f"--no-{key}")
            continue
        values = value if isinstance(value, list) else [value]
        flags += [f"--{key}", *map(str, values)]
    return flags


def parse_args(dataclass_types: tuple[type, ...], argv: list[str] | None = None, prog: str | None = None) -> tuple:
    """The command line `argv` (default: this process's) parsed into `dataclass_types` (`CommandParser.parse`).

    Raises:
        OptionsError: naming the unknown option or bad value.
    """
    return CommandParser(dataclass_types, prog=prog).parse(sys.argv[1:] if argv is None else list(argv))
