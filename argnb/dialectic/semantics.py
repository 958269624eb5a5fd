"""Dung semantics on top of a finished dialogue, computed by python-argumentation (PyArg).

A dialogue leaves a set of arguments and a defeat relation between them; that is an abstract
argumentation framework. We hand it to PyArg and read back the grounded extension (the sceptical
answer: what is accepted without any choice) and the preferred extensions (the credulous answers),
and label each argument IN (in the grounded extension), OUT (defeated by an IN argument) or UNDEC.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

Label = Literal["IN", "OUT", "UNDEC"]


def framework(arguments: Iterable[str], defeats: Iterable[tuple[str, str]], name: str = "af"):
    """A PyArg ``AbstractArgumentationFramework`` over argument names."""
    from py_arg.abstract_argumentation_classes.abstract_argumentation_framework import (
        AbstractArgumentationFramework,
    )
    from py_arg.abstract_argumentation_classes.argument import Argument as PyArgument
    from py_arg.abstract_argumentation_classes.defeat import Defeat

    args = {a: PyArgument(a) for a in arguments}
    ds = []
    for src, dst in defeats:
        for x in (src, dst):
            if x not in args:
                raise ValueError(f"defeat mentions unknown argument {x!r}")
        ds.append(Defeat(args[src], args[dst]))
    return AbstractArgumentationFramework(name, list(args.values()), ds)


def grounded_extension(arguments: Iterable[str], defeats: Iterable[tuple[str, str]]) -> set[str]:
    """Names in the grounded extension.

    >>> sorted(grounded_extension("abc", [("b", "a"), ("c", "b")]))
    ['a', 'c']
    """
    from py_arg.algorithms.semantics.get_grounded_extension import get_grounded_extension

    return {a.name for a in get_grounded_extension(framework(arguments, defeats))}


def preferred_extensions(
    arguments: Iterable[str], defeats: Iterable[tuple[str, str]]
) -> list[set[str]]:
    """Every preferred extension, sorted for stable display.

    >>> preferred_extensions("ab", [("a", "b"), ("b", "a")])
    [{'a'}, {'b'}]
    """
    from py_arg.algorithms.semantics.get_preferred_extensions import get_preferred_extensions

    exts = get_preferred_extensions(framework(arguments, defeats))
    return sorted(({a.name for a in e} for e in exts), key=lambda s: (len(s), sorted(s)))


def grounded_labelling(
    arguments: Iterable[str], defeats: Iterable[tuple[str, str]]
) -> dict[str, Label]:
    """IN / OUT / UNDEC for every argument, from the grounded extension.

    >>> grounded_labelling("abcd", [("b", "a"), ("c", "d"), ("d", "c")])
    {'a': 'OUT', 'b': 'IN', 'c': 'UNDEC', 'd': 'UNDEC'}
    """
    args = list(dict.fromkeys(arguments))
    defeats = list(defeats)
    ext = grounded_extension(args, defeats)
    out: dict[str, Label] = {}
    for a in args:
        if a in ext:
            out[a] = "IN"
        elif any(src in ext for src, dst in defeats if dst == a):
            out[a] = "OUT"
        else:
            out[a] = "UNDEC"
    return out
