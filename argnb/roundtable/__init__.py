"""Roundtable: a learner deliberates with LLM deliberators under an LLM moderator, while an
analyzer keeps a summary, the points of agreement, the open questions and an argument map.

After Turkstra, Nabhani & Al-Khatib's ArgsBase, rebuilt for JupyterLab and any backend. The
paper's turn rules hold in code (:mod:`.rules`): whatever the moderator model proposes, nobody
speaks twice in a row and the human speaks at least once in every three turns; an override is
recorded with the rule that fired. Deliberators keep to 150 words (revised once, then cut at a
sentence end). The same session runs headless with a scripted human, behind the widget, and
replays from its saved transcript.

    >>> from argnb.roundtable import Session
    >>> from argnb.roundtable.testing import table_backend
    >>> s = Session("Phones in class?", moderator=table_backend(),
    ...             deliberators=[table_backend(), table_backend()], analyzer=table_backend(),
    ...             human="Ann", turns=3).run(["Only for looking things up."])
    >>> s.speakers, s.analysis.agreements
    (['Deliberator 1', 'Deliberator 2', 'Ann'], ['Rules help.'])
"""

from __future__ import annotations

from argnb._lazy import lazy_getattr

_LAZY = {
    "Session": "argnb.roundtable.session",
    "Event": "argnb.roundtable.session",
    "HumanScript": "argnb.roundtable.session",
    "load_session": "argnb.roundtable.session",
    "replay": "argnb.roundtable.session",
    "SessionConfig": "argnb.roundtable.config",
    "TurnRules": "argnb.roundtable.rules",
    "Room": "argnb.roundtable.room",
    "GroupRules": "argnb.roundtable.floor",
    "schulze": "argnb.roundtable.vote",
    "Deliberator": "argnb.roundtable.deliberator",
    "Moderator": "argnb.roundtable.moderator",
    "Analyzer": "argnb.roundtable.analyzer",
    "analysis_map": "argnb.roundtable.analyzer",
    "analysis_framework": "argnb.roundtable.analyzer",
    "to_markdown": "argnb.roundtable.views",
    "RoundtableWidget": "argnb.roundtable.widget",
    "RoomWidget": "argnb.roundtable.room_widget",
    "FeedbackForm": "argnb.roundtable.feedback",
}

__all__ = sorted(_LAZY)
__getattr__ = lazy_getattr(__name__, _LAZY)
