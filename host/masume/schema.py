r"""Data files checked by their schema (msgspec): board definitions, card sets.

A file is read as TOML, then converted to its schema, a tree of msgspec Structs
that refuses unknown keys and values of the wrong type (a board is data, validated
by a schema that refuses unknown keys, as ESPHome's are). :func:`explain` turns
msgspec's error into one line in the file's own words: the line, the table
(``[[grid]] 2``, ``[readers]``), the key and, for an unknown key, the nearest known
one. ``masume schema`` writes the JSON Schemas editors read (hardware/schema/).

msgspec rather than hand-written checks: one declaration gives the check, the types
the code reads and the JSON Schema; it is small, fast and has no dependencies.

>>> from masume.boards import BoardFile
>>> source = 'id = "b"\ntitle = "B"\ncontroller = "pico-w"\n[power]\nbudjet_ma = 5\n'
>>> try:
...     msgspec.toml.decode(source, type=BoardFile)
... except msgspec.ValidationError as exc:
...     print(explain(exc, BoardFile, source))
line 5: [power]: unknown key 'budjet_ma' (did you mean 'budget_ma'?)
"""

from __future__ import annotations

import difflib
import re
from typing import Any

import msgspec

_ERROR = re.compile(r"^(?P<what>.*?)(?: - at `(?P<path>\$[^`]*)`)?$", re.DOTALL)
_STEP = re.compile(r"\.([A-Za-z0-9_-]+)|\[(\d+)\]|\[\.\.\.\]")


def explain(exc: msgspec.ValidationError, schema: type[Any], source: str = "") -> str:
    """msgspec's complaint about ``source`` (a TOML text read into ``schema``) as one
    line: ``line N: TABLE: what`` (the line when it can be found)."""
    match = _ERROR.match(str(exc))
    assert match is not None  # the pattern matches any text
    what, path = match["what"], match["path"] or "$"
    steps: list[str | int] = [name or int(index)
                              for name, index in _STEP.findall(path[1:]) if name or index]
    # Where in the file: the last table named on the way (``[[grid]] 2``, ``[power]``),
    # the key below it, if any. A table written inline (``symbols = { ... }`` inside a
    # ``[[card]]``) has no header of its own: it is named after its key (``symbols``,
    # ``abilities[2]``), and its line is that key's.
    table, key = "the top level", None
    header: tuple[str, int | None] | None = None
    inline: list[str] = []
    k = 0
    while k < len(steps):
        step = steps[k]
        nxt = steps[k + 1] if k + 1 < len(steps) else None
        if isinstance(step, str) and isinstance(nxt, int) and _is_table(schema, steps[:k + 2]):
            if not inline and _has_header(source, step, array=True):
                table, header, key = f"[[{step}]] {nxt + 1}", (step, nxt), None
            else:
                inline.append(f"{step}[{nxt + 1}]")
            k += 2
            continue
        if isinstance(step, str) and nxt is None and not _is_table(schema, steps[:k + 1]):
            key = step
        elif isinstance(step, str) and _is_table(schema, steps[:k + 1]):
            if not inline and _has_header(source, step, array=False):
                table, header, key = f"[{step}]", (step, None), None
            else:
                inline.append(step)
        else:
            key = key or (step if isinstance(step, str) else None)
        k += 1
    if inline:  # the line of the inline table's key, in the table around it
        line = _line(source, header, inline[0].partition("[")[0])
        table = f"{table}: {'.'.join(inline)}"
        key = key if key is not None and not _is_table(schema, steps) else None
    unknown = re.match(r"Object contains unknown field `(.+)`", what)
    missing = re.match(r"Object missing required field `(.+)`", what)
    if unknown:
        return unknown_key(unknown[1], _fields(schema, steps), source, header, table,
                           line=line if inline else None)
    if missing:
        text = f"missing {missing[1]!r}"
        if not inline:
            line = _line(source, header, None)
    else:
        text = (what[0].lower() + what[1:]).replace("`", "")
        if key is not None:
            text = f"{key!r}: {text}"
        if not inline:
            line = _line(source, header, key)
    return (f"line {line}: " if line else "") + f"{table}: {text}"


def _has_header(source: str, name: str, *, array: bool) -> bool:
    """Does ``source`` open the table ``name`` with a header line (``[[name]]``, ``[name]``)?
    Without a source, every table is taken as having one."""
    if not source:
        return True
    pattern = rf"^\s*\[\[\s*{re.escape(name)}\s*\]\]" if array else \
        rf"^\s*\[\s*{re.escape(name)}\s*\]"
    return re.search(pattern, source, re.MULTILINE) is not None


def unknown_key(name: str, known: list[str], source: str = "",
                header: tuple[str, int | None] | None = None,
                table: str = "the top level", *, line: int | None = None) -> str:
    r"""A key no schema knows, as one line: where it is and the nearest known key.

    >>> unknown_key("titel", ["id", "game", "title"], 'id = "x"\ntitel = "X"\n')
    "line 2: the top level: unknown key 'titel' (did you mean 'title'?)"
    """
    near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    text = f"unknown key {name!r}" + (f" (did you mean {near[0]!r}?)" if near else
                                      f" (known: {', '.join(known)})")
    line = line or _line(source, header, name)
    return (f"line {line}: " if line else "") + f"{table}: {text}"


def _type_at(schema: type[Any], steps: list[str | int]) -> Any:
    """The msgspec type found at ``steps`` from ``schema`` (None when lost)."""
    info: Any = msgspec.inspect.type_info(schema)
    for step in steps:
        info = _unwrap(info)
        if isinstance(step, int):
            if isinstance(info, msgspec.inspect.ListType):
                info = info.item_type
            else:
                return None
        elif isinstance(info, msgspec.inspect.StructType):
            fields = {f.encode_name: f.type for f in info.fields}
            if step not in fields:
                return None
            info = fields[step]
        elif isinstance(info, msgspec.inspect.DictType):
            info = info.value_type
        else:
            return None
    return _unwrap(info)


def _unwrap(info: Any) -> Any:
    """A union with None (an optional table) is the table."""
    if isinstance(info, msgspec.inspect.UnionType):
        rest = [t for t in info.types if not isinstance(t, msgspec.inspect.NoneType)]
        if len(rest) == 1:
            return rest[0]
    return info


def _is_table(schema: type[Any], steps: list[str | int]) -> bool:
    return isinstance(_type_at(schema, steps), msgspec.inspect.StructType)


def _fields(schema: type[Any], steps: list[str | int]) -> list[str]:
    info = _type_at(schema, steps)
    if isinstance(info, msgspec.inspect.StructType):
        return [f.encode_name for f in info.fields]
    return []


def _line(source: str, header: tuple[str, int | None] | None, key: str | None) -> int | None:
    """The line (from 1) of ``key`` in the table ``header`` ((name, index) of an array
    of tables, (name, None) of a table, None: the top level), else of the header."""
    lines = source.splitlines()
    headers = [n for n, text in enumerate(lines) if re.match(r"^\s*\[", text)]
    start = -1  # the top level: from the first line to the first header
    if header is not None:
        name, index = header
        pattern = (re.compile(rf"^\s*\[\[\s*{re.escape(name)}\s*\]\]") if index is not None
                   else re.compile(rf"^\s*\[\s*{re.escape(name)}\s*\]"))
        found = [n for n in headers if pattern.match(lines[n])]
        if len(found) <= (index or 0):
            return None
        start = found[index or 0]
    end = next((n for n in headers if n > start), len(lines))
    if key is not None:
        key_at = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
        for n in range(start + 1, end):
            if key_at.match(lines[n]):
                return n + 1
    return start + 1 if header is not None else None
