"""What each learner used: one row per request, kept in a database through SQLAlchemy.

SQLite by default (one file beside the gateway); any SQLAlchemy URL works, so a larger hub points
it at the Postgres it already runs. The gateway is the only writer. Today's tokens per learner are
also kept in memory (loaded once from the table), so checking a limit costs no query.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from dataclasses import dataclass
from typing import Any

#: a learner's own limits, when the instructor changed them (else the class defaults hold)
LIMIT_FIELDS = ("tokens_per_day", "concurrent")
#: a call the model answered whose answer was not used (the gate or the schema stopped it): the
#: model server did not fail, so it is not counted as ``failed``
UNUSABLE = "unusable"


@dataclass(frozen=True)
class Limits:
    """What one learner may use: tokens per day, requests at once, requests waiting."""

    tokens_per_day: int = 200_000
    concurrent: int = 2
    waiting: int = 32

    def __post_init__(self) -> None:
        for name in ("tokens_per_day", "concurrent", "waiting"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"limit {name} must be a positive whole number, not {value!r}")


@dataclass(frozen=True)
class Use:
    """One request as the gateway saw it."""

    user: str
    lesson: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    status: str  # ok | error | refused | cut
    started: float
    estimated: bool = False  # the server sent no token counts (a stream without usage)


def today(now: float | None = None) -> str:
    """The day a limit counts in (the server's local date)."""
    return dt.date.fromtimestamp(time.time() if now is None else now).isoformat()


class UsageStore:
    """The usage table, the per-learner limits table, and today's totals in memory."""

    def __init__(self, url: str) -> None:
        import sqlalchemy as sa

        self._sa = sa
        if url.startswith("sqlite:///") and len(url) > len("sqlite:///"):
            from pathlib import Path

            Path(url[len("sqlite:///") :]).parent.mkdir(parents=True, exist_ok=True)
        self.engine = sa.create_engine(url, future=True)
        meta = sa.MetaData()
        self.usage = sa.Table(
            "argnb_usage",
            meta,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("user", sa.String(255), nullable=False, index=True),
            sa.Column("lesson", sa.String(255), nullable=False, default=""),
            sa.Column("model", sa.String(255), nullable=False, default=""),
            sa.Column("day", sa.String(10), nullable=False, index=True),
            sa.Column("started", sa.Float, nullable=False),
            sa.Column("seconds", sa.Float, nullable=False),
            sa.Column("prompt_tokens", sa.Integer, nullable=False),
            sa.Column("completion_tokens", sa.Integer, nullable=False),
            sa.Column("status", sa.String(16), nullable=False),
            sa.Column("estimated", sa.Boolean, nullable=False, default=False),
        )
        self.limits = sa.Table(
            "argnb_limits",
            meta,
            sa.Column("user", sa.String(255), primary_key=True),
            sa.Column("tokens_per_day", sa.Integer, nullable=True),
            sa.Column("concurrent", sa.Integer, nullable=True),
        )
        meta.create_all(self.engine)
        self._lock = threading.Lock()
        self._day = today()
        self._tokens: dict[str, int] = self._load_today()

    def _load_today(self) -> dict[str, int]:
        sa = self._sa
        u = self.usage
        q = (
            sa.select(u.c.user, sa.func.sum(u.c.prompt_tokens + u.c.completion_tokens))
            .where(u.c.day == self._day)
            .group_by(u.c.user)
        )
        with self.engine.connect() as conn:
            return {user: int(total or 0) for user, total in conn.execute(q)}

    def tokens_today(self, user: str) -> int:
        """Tokens ``user`` used today (prompt + completion)."""
        with self._lock:
            if self._day != today():
                self._day, self._tokens = today(), {}
            return self._tokens.get(user, 0)

    def record(self, use: Use) -> None:
        """Append one request and add its tokens to today's total."""
        row = {
            "user": use.user,
            "lesson": use.lesson[:255],
            "model": use.model[:255],
            "day": today(use.started),
            "started": use.started,
            "seconds": round(use.seconds, 4),
            "prompt_tokens": max(0, int(use.prompt_tokens)),
            "completion_tokens": max(0, int(use.completion_tokens)),
            "status": use.status,
            "estimated": use.estimated,
        }
        with self.engine.begin() as conn:
            conn.execute(self.usage.insert().values(**row))
        with self._lock:
            if self._day != row["day"]:
                self._day, self._tokens = row["day"], self._load_today()
            else:
                total = row["prompt_tokens"] + row["completion_tokens"]
                self._tokens[use.user] = self._tokens.get(use.user, 0) + total

    def limits_for(self, user: str, default: Limits) -> Limits:
        """The class defaults, with what the instructor set for this learner."""
        sa = self._sa
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(self.limits).where(self.limits.c.user == user)).first()
        if row is None:
            return default
        own = {k: getattr(row, k) for k in LIMIT_FIELDS if getattr(row, k) is not None}
        return Limits(**{**default.__dict__, **own})

    def own_limits(self) -> dict[str, dict[str, int]]:
        """Every learner the instructor gave limits of their own, and those limits."""
        with self.engine.connect() as conn:
            rows = conn.execute(self._sa.select(self.limits).order_by(self.limits.c.user)).all()
        return {
            r.user: {k: getattr(r, k) for k in LIMIT_FIELDS if getattr(r, k) is not None}
            for r in rows
        }

    def set_limits(self, user: str, **limits: int | None) -> None:
        """Give one learner limits of their own (``None`` returns a limit to the class default)."""
        unknown = set(limits) - set(LIMIT_FIELDS)
        if unknown:
            raise ValueError(f"unknown limit(s) {sorted(unknown)}; use {', '.join(LIMIT_FIELDS)}")
        Limits(**{k: v for k, v in limits.items() if v is not None})  # validates the numbers
        with self.engine.begin() as conn:
            conn.execute(self.limits.delete().where(self.limits.c.user == user))
            conn.execute(self.limits.insert().values(user=user, **limits))

    def summary(self, day: str | None = None) -> list[dict[str, Any]]:
        """Requests, tokens and seconds per learner and lesson (all days, or one)."""
        sa = self._sa
        u = self.usage
        q = sa.select(
            u.c.user,
            u.c.lesson,
            sa.func.count().label("requests"),
            sa.func.sum(u.c.prompt_tokens).label("prompt_tokens"),
            sa.func.sum(u.c.completion_tokens).label("completion_tokens"),
            sa.func.sum(u.c.seconds).label("seconds"),
            sa.func.sum(sa.case((u.c.status.not_in(("ok", UNUSABLE)), 1), else_=0)).label("failed"),
            sa.func.sum(sa.case((u.c.status == UNUSABLE, 1), else_=0)).label("unusable"),
            sa.func.sum(sa.case((u.c.status == "refused", 1), else_=0)).label("refused"),
            sa.func.sum(
                sa.case((u.c.estimated, u.c.prompt_tokens + u.c.completion_tokens), else_=0)
            ).label("estimated_tokens"),
        ).group_by(u.c.user, u.c.lesson)
        if day is not None:
            q = q.where(u.c.day == day)
        with self.engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(q.order_by(u.c.user, u.c.lesson))]
        for r in rows:
            r["seconds"] = round(float(r["seconds"] or 0), 3)
            for k in (
                "prompt_tokens",
                "completion_tokens",
                "failed",
                "unusable",
                "refused",
                "estimated_tokens",
            ):
                r[k] = int(r[k] or 0)
        return rows
