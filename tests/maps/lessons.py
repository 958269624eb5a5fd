"""The maps the lessons show, built from the authored reference sessions (no model), with the
display arguments of their notebook cells: 02's camera dialogue, 04's reference debate, 05's
reference roundtable."""

from __future__ import annotations

from typing import Any

from argnb.maps import ArgumentMap


def lesson_maps() -> dict[str, tuple[ArgumentMap, dict[str, Any]]]:
    """``{"02": (map, show kwargs), "04": …, "05": …}`` as the notebooks call ``show``."""
    from argnb.debate import debate_map
    from argnb.debate.reference import replay_debate
    from argnb.dialectic import camera_reference_backend, run_dialogue
    from argnb.roundtable.reference import replay_session

    return {
        "02": (run_dialogue(camera_reference_backend(), "camera").to_map(), {}),
        "04": (
            debate_map(replay_debate()),
            {"color_by": "agent", "height": "380px", "frame_height": 460},
        ),
        "05": (
            replay_session().to_map(),
            {"color_by": "agent", "height": "420px", "frame_height": 500},
        ),
    }
