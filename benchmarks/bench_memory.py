"""Peak RSS of a process that loads the embedded model and answers 20 structured questions.

python benchmarks/bench_memory.py     (target: < 600 MB)
"""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap

from _common import table

CHILD = textwrap.dedent(
    """
    from pydantic import BaseModel, Field
    from argnb.llm import LocalBackend, structured_call

    class A(BaseModel):
        agree: bool
        reason: str = Field(max_length=60)

    b = LocalBackend()
    for k in range(20):
        structured_call(b, f"Is {k} a prime number?", A)
    """
)


def run() -> list[dict]:
    subprocess.run([sys.executable, "-c", CHILD], check=True)
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
    return [
        {
            "benchmark": "peak RSS: load embedded model + 20 structured questions",
            "peak_rss_mb": f"{peak_mb:.0f}",
            "target": "< 600 MB",
            "pass": peak_mb < 600,
        }
    ]


if __name__ == "__main__":
    print(table("memory", run()))
