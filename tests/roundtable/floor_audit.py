"""An independent reading of a room's history against the turn rules' bounds (argnb.roundtable.
floor states them; this checks them without its code), shared by the rules' and the room's tests."""

from __future__ import annotations


def audit(events: list[tuple[str, str]], every: int) -> list[str]:
    """The bounds, checked from the history alone: nobody twice in a row; a human at least once
    in any N speaker turns while one is seated; each seated human within N x (the most humans
    seated during their wait) turns; a raised hand within max(N, humans seated) turns."""
    problems: list[str] = []
    spoken: list[str] = []
    seated: list[str] = []
    waits: dict[str, list[int]] = {}  # human -> [turn their wait began, most humans seated]
    hands: dict[str, tuple[int, int]] = {}
    ever: set[str] = set()
    for what, name in events:
        t = len(spoken)
        if what == "join" and name not in seated:
            seated.append(name)
            ever.add(name)
            waits[name] = [t, 0]
            for w in waits.values():
                w[1] = max(w[1], len(seated))
        elif what == "leave" and name in seated:
            seated.remove(name)
            waits.pop(name)
            hands.pop(name, None)
        elif what == "hand" and name in seated and name not in hands:
            hands[name] = (t, max(every, len(seated)))
        elif what == "lower":
            hands.pop(name, None)
        elif what == "turn":
            if spoken and spoken[-1] == name:
                problems.append(f"turn {t}: {name} twice in a row")
            if name in ever and name not in seated:
                problems.append(f"turn {t}: {name} is not seated")
            spoken.append(name)
            if name in seated:
                waits[name] = [t + 1, len(seated)]
                hands.pop(name, None)
            t += 1
            for h, (since, most) in waits.items():
                if t - since > every * most:
                    problems.append(f"turn {t}: {h} waited {t - since} > {every * most}")
            for h, (since, bound) in hands.items():
                if t - since > bound:
                    problems.append(f"turn {t}: {h}'s hand waited {t - since} > {bound}")
            recent = spoken[-every:]
            if seated and len(recent) == every and not set(recent) & ever:
                problems.append(f"turn {t}: no human in the last {every} turns")
    return problems
