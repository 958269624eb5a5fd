"""Plain data between the checker and a student's kernel: the only thing that crosses.

A check runs in the checker (:mod:`.checker`); a student's function or variable reaches it as
JSON built here. Tags keep the types the exercises pass around (tuples, sets, dicts with any
keys, non-finite floats, numpy arrays, pandas frames and series, ``random.Random``, a few
pydantic models); anything else is refused. The checker owns the decoding: whatever the kernel
sends, :func:`loads` builds only these types, bounded in size and depth, so an object with a
lying ``__eq__`` cannot arrive.
"""

from __future__ import annotations

import importlib
import itertools
import json
import math
import random
from collections.abc import ItemsView, Iterator, KeysView, ValuesView
from typing import Any

from argnb.errors import CodecError

__all__ = ["CodecError", "decode", "dumps", "encode", "loads"]

#: bytes of one message, either way
MAX_BYTES = 4 * 2**20
#: nesting of containers, and items taken from an iterator
MAX_DEPTH, MAX_ITEMS = 64, 1_000_000
#: the longest integer that crosses (Python's own limit for turning one into text is 4300)
MAX_INT_DIGITS = 4000
MAX_INT_BITS = int(MAX_INT_DIGITS * 3.3219)
#: pydantic models that may cross, by tag (``module:class``); their fields are validated
MODELS = {
    "argnb.dialectic.schemas:Argument",
    "argnb.dialectic.case:Case",
    "argnb.dialectic.case:Stance",
    "argnb.roundtable.payloads:Analysis",
}
#: numpy dtypes an array may have
DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64"}


def _model_tag(value: Any) -> str | None:
    cls = type(value)
    tag = f"{cls.__module__}:{cls.__qualname__}"
    return tag if tag in MODELS else None


def encode(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON-ready data (tagged where JSON has no such type)."""
    if depth > MAX_DEPTH:
        raise CodecError("the value is nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if abs(value) < 2**63:
            return value
        if value.bit_length() > MAX_INT_BITS:
            raise CodecError(f"an integer of more than {MAX_INT_DIGITS} digits cannot be graded")
        return {"$int": str(int(value))}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, list):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return {"$tuple": [encode(v, depth + 1) for v in value]}
    if isinstance(value, (set, frozenset)):
        return {"$set": [encode(v, depth + 1) for v in value]}
    if isinstance(value, dict):
        return {"$dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if isinstance(value, random.Random):
        return {"$random": encode(value.getstate(), depth + 1)}
    tag = _model_tag(value)
    if tag:
        return {"$model": tag, "data": value.model_dump(mode="json")}
    module = type(value).__module__.split(".")[0]
    if module == "numpy":
        return _encode_numpy(value, depth)
    if module == "pandas":
        return _encode_pandas(value, depth)
    if isinstance(value, (range, KeysView, ValuesView, ItemsView, Iterator)):
        items = list(itertools.islice(value, MAX_ITEMS + 1))  # a generator's answers, say
        if len(items) > MAX_ITEMS:
            raise CodecError(f"more than {MAX_ITEMS} items")
        return [encode(v, depth + 1) for v in items]
    raise CodecError(f"a value of type {type(value).__name__} cannot be graded")


def _encode_numpy(value: Any, depth: int) -> Any:
    import numpy as np

    if isinstance(value, np.generic):
        return encode(value.item(), depth)
    if isinstance(value, np.ndarray) and str(value.dtype) in DTYPES:
        return {"$ndarray": {"dtype": str(value.dtype), "data": encode(value.tolist(), depth + 1)}}
    raise CodecError(f"a numpy value of type {type(value).__name__} cannot be graded")


def _encode_pandas(value: Any, depth: int) -> Any:
    import pandas as pd

    if isinstance(value, pd.DataFrame):
        return {
            "$frame": {
                "columns": encode(list(value.columns), depth + 1),
                "index": encode(list(value.index), depth + 1),
                "rows": encode(value.values.tolist(), depth + 1),
            }
        }
    if isinstance(value, pd.Series):
        return {
            "$series": {
                "name": encode(value.name, depth + 1),
                "index": encode(list(value.index), depth + 1),
                "data": encode(value.tolist(), depth + 1),
            }
        }
    raise CodecError(f"a pandas value of type {type(value).__name__} cannot be graded")


def decode(data: Any, depth: int = 0) -> Any:
    """The value :func:`encode` made; :class:`CodecError` for anything else."""
    if depth > MAX_DEPTH:
        raise CodecError("the value is nested too deeply")
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, list):
        return [decode(v, depth + 1) for v in data]
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise CodecError("not a value the grader sent or expects")
    ((tag, body), *rest) = data.items()
    if tag == "$tuple" and isinstance(body, list):
        return tuple(decode(v, depth + 1) for v in body)
    if tag == "$set" and isinstance(body, list):
        return {_hashable(decode(v, depth + 1)) for v in body}
    if tag == "$dict" and isinstance(body, list):
        out = {}
        for pair in body:
            if not isinstance(pair, list) or len(pair) != 2:
                raise CodecError("a dict entry is not a pair")
            out[_hashable(decode(pair[0], depth + 1))] = decode(pair[1], depth + 1)
        return out
    if tag == "$int" and isinstance(body, str) and len(body) <= MAX_INT_DIGITS + 1:
        try:
            return int(body)
        except ValueError:
            raise CodecError("not an integer") from None
    if tag == "$float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == "$random":
        rng = random.Random()
        try:
            rng.setstate(decode(body, depth + 1))
        except (TypeError, ValueError) as exc:
            raise CodecError(f"not a random generator's state: {exc}") from None
        return rng
    if tag == "$model" and body in MODELS and rest and rest[0][0] == "data":
        module, _, name = body.partition(":")
        cls = getattr(importlib.import_module(module), name)
        try:
            return cls.model_validate(rest[0][1])
        except ValueError as exc:
            raise CodecError(f"not a valid {name}: {str(exc).splitlines()[0]}") from None
    if tag == "$ndarray" and isinstance(body, dict) and body.get("dtype") in DTYPES:
        import numpy as np

        try:
            return np.array(decode(body.get("data"), depth + 1), dtype=body["dtype"])
        except (TypeError, ValueError) as exc:
            raise CodecError(f"not a numeric array: {exc}") from None
    if tag in ("$frame", "$series") and isinstance(body, dict):
        return _decode_pandas(tag, body, depth)
    raise CodecError("not a value the grader sent or expects")


def _decode_pandas(tag: str, body: dict, depth: int) -> Any:
    import pandas as pd

    index = decode(body.get("index"), depth + 1)
    if not isinstance(index, list):
        raise CodecError("a table's index must be a list")
    try:
        if tag == "$frame":
            columns = decode(body.get("columns"), depth + 1)
            rows = decode(body.get("rows"), depth + 1)
            return pd.DataFrame(rows, columns=columns, index=index or None)
        name = decode(body.get("name"), depth + 1)
        return pd.Series(decode(body.get("data"), depth + 1), index=index or None, name=name)
    except (TypeError, ValueError) as exc:
        raise CodecError(f"not a table: {exc}") from None


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        raise CodecError(f"a {type(value).__name__} cannot be a set item or a key") from None
    return value


def dumps(value: Any) -> str:
    """One line of JSON for ``value`` (:class:`CodecError` when it cannot cross)."""
    text = json.dumps(encode(value), ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    if len(text) > MAX_BYTES:
        raise CodecError(f"the value is too large ({len(text)} bytes; at most {MAX_BYTES})")
    return text


def loads(text: str | bytes) -> Any:
    """The value in ``text``, checked (size, depth, types)."""
    if len(text) > MAX_BYTES:
        raise CodecError(f"the value is too large (at most {MAX_BYTES} bytes)")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise CodecError(f"not JSON: {exc}") from None
    return decode(data)
