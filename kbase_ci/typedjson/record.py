"""`Record`: the frozen records `typedjson.decode` fills (a manifest block, a CI report
key), made cheaply."""

from __future__ import annotations

import inspect
import typing
from typing import Any, Self


class _Omit:
    """`Annotated[X | None, OMIT_NONE] = None`: the key may be absent, and is left out of
    `encode`'s output while the value is None."""


OMIT_NONE = _Omit()


@typing.dataclass_transform(frozen_default=True)
class Record:
    """A frozen record: `class Shard(Record): domain: str; notes: int = 0` gets an
    `__init__` (positional, or keyword only with `class X(Record, kw_only=True)`),
    equality, a hash, a repr and `_replace`, as a frozen dataclass would (type checkers
    are told so: `dataclass_transform`). Made without generating code: every query makes
    the manifest's ~20 record classes at start, where 22 frozen dataclasses took 12-14
    times as long to make, and 22 `typing.NamedTuple`s 2-3 times (docs/index-format.md)."""

    __slots__ = ()
    _fields: typing.ClassVar[tuple[str, ...]] = ()
    _defaults: typing.ClassVar[dict[str, Any]] = {}
    _kw_only: typing.ClassVar[bool] = False

    def __init_subclass__(cls, *, kw_only: bool | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        own = [n for n, a in inspect.get_annotations(cls).items()
               if not str(a).startswith(("ClassVar", "typing.ClassVar"))]
        cls._fields = (*cls._fields, *own)
        cls._defaults = {**cls._defaults, **{n: cls.__dict__[n] for n in own
                                             if n in cls.__dict__}}
        if kw_only is not None:
            cls._kw_only = kw_only

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        names = self._fields
        if args:
            if self._kw_only or len(args) > len(names):
                most = 0 if self._kw_only else len(names)
                raise TypeError(f"{type(self).__name__}() takes {most} positional arguments")
            kwargs.update(zip(names, args, strict=False))
        for name in names:
            value = kwargs.pop(name, _MISSING)
            if value is _MISSING:
                value = self._defaults.get(name, _MISSING)
                if value is _MISSING:
                    raise TypeError(f"{type(self).__name__}() lacks {name}")
            object.__setattr__(self, name, value)
        if kwargs:
            raise TypeError(f"{type(self).__name__}() has no field {next(iter(kwargs))}")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, n) for n in self._fields)

    def _replace(self, **changes: Any) -> Self:
        return type(self)(**{**{n: getattr(self, n) for n in self._fields}, **changes})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"{type(self).__name__}({shown})"


_MISSING = object()
