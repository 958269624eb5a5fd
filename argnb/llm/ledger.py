"""Usage ledger: how many calls, tokens and seconds each backend + model cost.

Learners compare methods by cost as well as accuracy (deliberation costs several calls per
item), so every backend call is recorded here, cache hits included and marked as such.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from argnb.llm.types import Usage


@dataclass(frozen=True)
class Entry:
    """One recorded call."""

    backend: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    cached: bool
    at: float
    reused_tokens: int = 0  # of prompt_tokens: restored from a shared prefix, not evaluated


class Ledger:
    """A thread-safe, append-only list of calls."""

    def __init__(self) -> None:
        self._entries: list[Entry] = []
        self._lock = threading.Lock()

    def record(
        self, backend: str, model: str, usage: Usage, seconds: float, *, cached: bool = False
    ) -> None:
        entry = Entry(
            backend,
            model,
            usage.prompt_tokens,
            usage.completion_tokens,
            seconds,
            cached,
            time.time(),
            usage.reused_tokens,
        )
        with self._lock:
            self._entries.append(entry)

    @property
    def entries(self) -> list[Entry]:
        with self._lock:
            return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def calls(self, *, include_cached: bool = False) -> int:
        """Number of calls that reached a model (cache hits only when asked)."""
        return sum(1 for e in self.entries if include_cached or not e.cached)

    def reset(self) -> None:
        with self._lock:
            self._entries.clear()

    def to_dataframe(self, *, by_call: bool = False) -> pd.DataFrame:
        """Totals per backend + model (or one row per call with ``by_call=True``)."""
        import pandas as pd

        rows = [asdict(e) for e in self.entries]
        df = pd.DataFrame(
            rows,
            columns=[
                "backend",
                "model",
                "prompt_tokens",
                "completion_tokens",
                "seconds",
                "cached",
                "at",
                "reused_tokens",
            ],
        )
        if by_call:
            return df
        hit = df["cached"].astype(bool)
        df["calls"] = (~hit).astype(int)
        df["cache_hits"] = hit.astype(int)
        # tokens and seconds count what reached a model; a cache hit costs nothing
        df.loc[hit, ["prompt_tokens", "completion_tokens", "reused_tokens", "seconds"]] = 0
        out = (
            df.groupby(["backend", "model"], as_index=False)[
                [
                    "calls",
                    "cache_hits",
                    "prompt_tokens",
                    "reused_tokens",
                    "completion_tokens",
                    "seconds",
                ]
            ]
            .sum()
            .round({"seconds": 2})
        )
        return out

    def _repr_html_(self) -> str:
        return self.to_dataframe().to_html(index=False)


_DEFAULT = Ledger()


def default_ledger() -> Ledger:
    """The process-wide ledger that backends record into unless given another."""
    return _DEFAULT


def usage() -> pd.DataFrame:
    """Usage so far in this process, per backend and model."""
    return _DEFAULT.to_dataframe()
