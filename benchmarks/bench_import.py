"""How long ``python -c "import argnb"`` takes (heavy imports must stay lazy).

python benchmarks/bench_import.py     (target: < 0.3 s)
"""

from __future__ import annotations

import subprocess
import sys
import time

from _common import median, table


def run(n: int = 7) -> list[dict]:
    def once(code: str) -> float:
        s = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - s

    bare = median([once("pass") for _ in range(n)])
    full = median([once("import argnb") for _ in range(n)])
    return [
        {
            "benchmark": "python -c 'import argnb'",
            "runs": n,
            "median_s": f"{full:.3f}",
            "of_which_interpreter_s": f"{bare:.3f}",
            "target": "< 0.3 s",
            "pass": full < 0.3,
        }
    ]


if __name__ == "__main__":
    print(table("import time", run()))
