"""The records kbase writes as JSON or reads from it, on one base (`record.Record`:
query answers and parameters, the index manifest, the CI report, check findings, handover
reports, the index's core table; `record.Row` for the parse cache's notes), and one decoder
(`decoding`) for JSON that kbase did not write here: the index manifest (an index branch
anyone with push access writes), the CI report a fork's workflow uploads, and the GitHub
event payload.

A record type is declared once, as a `Record` whose field types say what each
key holds (`int`, `str | None`, `tuple[str, ...]`, `dict[str, Shard]`, a `Literal`,
another record) and, through `Annotated[..., Check(...)]`, the values it may take.
`decode` (`decoding`) walks the JSON with that declaration and either returns the record
or raises `ShapeError` naming the first bad key by its path (`shards["a"].chunks should
be a whole number, not "x"`); callers prefix their file and pick the error class. A key
with a default (or `json_field(omit=True)`) may be absent; any other key is required;
keys the type does not name are ignored. A record may have a method `_problem(self) ->
str | None` for a rule between its fields. `encode` is the inverse, for writers: the
same dict the JSON had. Where the JSON is shaped otherwise than the fields (keys in
another order, a sub-object of some fields, a record's keys flattened into its parent's, a
computed key), the class declares it (`json_field(within=..., flatten=..., as_json=...)`,
the class keyword `json`), and writing, `decode` and `from_json` follow it: one type both
ways, no hand-written `to_json`.

Why not msgspec or pydantic, and why `Record` rather than dataclasses: every query
reads a manifest, in a new process, so what counts is the cost at its start. Importing
msgspec cost 18-68 ms there, pydantic with one model 200-490 ms; making the manifest's
~20 records as frozen dataclasses cost 12-14 times what `Record`s do. Decoding in
Python is slower (about 1 ms for dnd-5e-srd's 25 KB manifest against 0.1 ms), and one
query pays it once. The figures: docs/index-format.md, "Where the manifest is declared".
"""

from kbase_ci.typedjson.decoding import (
    Check,
    ShapeError,
    at_least,
    between,
    decode,
    encode,
    matching,
    shown,
)
from kbase_ci.typedjson.record import MISSING, Record, Row, json_field, json_keys

__all__ = ["MISSING", "Check", "Record", "Row", "ShapeError", "at_least", "between", "decode",
           "encode", "json_field", "json_keys", "matching", "shown"]
