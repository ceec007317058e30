"""``masume schema [FOLDER]``: write the JSON Schemas of the data files, for editors.

``board.schema.json`` (hardware/boards/*.toml) and ``card-set.schema.json`` (card set
files), from the schemas the host checks the files with (masume.boards.BoardFile,
masume.cards.CardSetFile). An editor with a TOML language server (Taplo, Even Better
TOML) points a file at one with ``#:schema ../schema/board.schema.json`` on its first line.
"""

from __future__ import annotations

import argparse
import inspect
import json
from pathlib import Path
from typing import Any


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("schema", help="write the JSON Schemas of board and card set files")
    parser.add_argument("folder", nargs="?", type=Path, default=None,
                        help="where to write them (default: hardware/schema/ of the source)")
    parser.set_defaults(handler=_run)


def schemas() -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema."""
    from masume import boards, cards

    return {"board.schema.json": _clean_descriptions(boards.json_schema()),
            "card-set.schema.json": _clean_descriptions(cards.json_schema())}


def _clean_descriptions(node: Any) -> Any:
    """``node`` with each description's docstring indentation taken out: msgspec before
    0.23 left a docstring's continuation lines indented, 0.23 takes it out, and the
    published files must not change with the installed msgspec.

    >>> _clean_descriptions({"description": "a table\\n    outside", "items": [{}]})
    {'description': 'a table\\noutside', 'items': [{}]}
    """
    if isinstance(node, dict):
        return {key: inspect.cleandoc(value) if key == "description" and isinstance(value, str)
                else _clean_descriptions(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_clean_descriptions(item) for item in node]
    return node


def text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def _run(args: argparse.Namespace) -> int:
    from masume.boards import boards_dir

    folder = args.folder or boards_dir().parent / "schema"
    folder.mkdir(parents=True, exist_ok=True)
    for name, schema in schemas().items():
        (folder / name).write_text(text(schema), encoding="utf-8")
        print(f"wrote {folder / name}")
    return 0
