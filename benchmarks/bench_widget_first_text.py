"""Widget time to first visible text after Send (04) and Start (05), measured in the browser.

python benchmarks/bench_widget_first_text.py      (no target yet: it shows what a learner waits)

Runs the browser suite's tests for notebooks 04 and 05 (``tests/browser``: JupyterLab in headless
Chromium, the notebooks on the embedded model with a fresh response cache: every answer live,
not ``make test``'s recorded ones) with ``ARGNB_BENCH_OUT`` set; they time, in the page, from the click on Send in 04's debate widget
(the rdebater agent) and on Start in 05's live roundtable widget to the first text of the reply
the page shows (a MutationObserver; ``tests/browser/lab.py: time_first_text``). One run each:
the whole notebook runs before it (minutes), and what the machine does meanwhile is in the
number -- run it on a quiet machine. Skips without Chromium or Playwright.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import table

ROOT = Path(__file__).resolve().parents[1]


def run() -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="argnb-bench-") as tmp:
        out = Path(tmp) / "first_text.json"
        # ARGNB_TEST_REPLAY=0: live answers, not the recording make test replays (tests/recording.py)
        env = {**os.environ, "ARGNB_BENCH_OUT": str(out), "ARGNB_TEST_REPLAY": "0"}
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-m", "browser", "-p", "no:cacheprovider", "-q",
             "tests/browser", "-k", "04_retrieval or 05_roundtable"],
            cwd=ROOT, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if not out.exists():
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
            return [
                {"widget": "none measured", "why": " / ".join(tail) or f"exit {proc.returncode}"}
            ]
        found = json.loads(out.read_text(encoding="utf-8"))
    return [
        {
            "widget: click": what,
            "model": f"{m['backend']}:{m['model']}",
            "llama.cpp threads": m["threads"],
            "first text (s)": f"{m['seconds']:.2f}",
            "first words": " ".join(m["text"].split()[:6]) + "…",
        }
        for what, m in found.items()
    ]


if __name__ == "__main__":
    print(table("widget time to first visible text (browser, local)", run()))
