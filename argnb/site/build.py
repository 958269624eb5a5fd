"""Build the course site: stage the sources, run Sphinx (MyST-NB executes the lessons through
jupyter-cache), mark the output folder as a site.

Sphinx runs in a child process with a clean environment for the lessons: the embedded model
(no ``ARGNB_BACKEND``/``ARGNB_MODEL``, no user config file), argnb's response cache on, and the
work folder (sources, doctrees, jupyter-cache) outside the repository. A rebuild with an
unchanged lesson executes nothing: jupyter-cache keys a notebook by its code cells.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from argnb.errors import ArgnbError, MissingDependency

if TYPE_CHECKING:
    from argnb.site.stage import Sources

#: a file in every folder this command built: the only non-empty folders it writes into
MARKER = ".argnb-site"
NEEDS = ("sphinx", "myst_nb", "sphinx_book_theme", "jupyter_cache")
HINT = "pip install 'argnb[site]'"
_EXECUTED = re.compile(r"Executing notebook using .*?(\S+\.ipynb)|Executed notebook in", re.I)
_CACHED = re.compile(r"Using cached notebook", re.I)


@dataclass
class SiteBuild:
    """What :func:`build_site` did."""

    out: Path
    work: Path
    seconds: float
    executed: int
    cached: int
    pages: list[str] = field(default_factory=list)
    log: Path | None = None


def check_dependencies() -> None:
    """Sphinx, MyST-NB, the book theme and jupyter-cache, or one error naming the extra."""
    missing = [m for m in NEEDS if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingDependency(
            f"building the course site needs {', '.join(missing)}, which is not installed",
            hint=HINT,
        )


def check_out(out: Path) -> None:
    """Refuse to write into a file or into a folder that holds something other than a site."""
    if out.exists() and not out.is_dir():
        raise ArgnbError(f"{out} is a file", hint="name a new folder for the site")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
        raise ArgnbError(
            f"{out} is not empty and was not built by `argnb course site`",
            hint="name a new or empty folder (or one this command built before)",
        )


def default_work(out: Path) -> Path:
    """A work folder per output folder, in argnb's cache folder (``$ARGNB_CACHE_DIR`` or the
    user cache folder, as for the response cache; kept between builds)."""
    from platformdirs import user_cache_dir

    key = hashlib.sha256(str(out).encode("utf-8")).hexdigest()[:12]
    return Path(os.environ.get("ARGNB_CACHE_DIR") or user_cache_dir("argnb")) / "site" / key


#: never passed to the lessons: they run on the embedded model and need no server or key
_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.I)
_SERVERS = ("ARGNB_BACKEND", "ARGNB_MODEL", "OPENAI_BASE_URL", "OLLAMA_HOST", "ARGNB_CLASS_URL")


def lesson_env(work: Path, root: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the build and of the kernels that execute the lessons: no key or
    server of the builder's (the site shows the embedded model, as its notes say), and the
    folders whose paths :mod:`argnb.site.redact` hides."""
    env = dict(os.environ if base is None else base)
    for var in [v for v in env if _SECRET.search(v) or v in _SERVERS]:
        del env[var]
    hide = [str(root), str(work), sys.prefix, sys.base_prefix, str(Path.home())]
    env["ARGNB_SITE_REDACT"] = os.pathsep.join(hide)
    env["ARGNB_CONFIG"] = str(work / "no-config.toml")  # never read: the user's choice stays out
    env["ARGNB_CACHE"] = "1"
    env["ARGNB_SITE_CACHE"] = str(work / "jupyter-cache")
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # the debugger's frozen-modules note on stderr
    env.setdefault("MPLBACKEND", "Agg")
    return env


def build_site(
    out: str | Path,
    sources: Sources,
    *,
    work: str | Path | None = None,
    env: dict[str, str] | None = None,
    quiet: bool = False,
) -> SiteBuild:
    """Build the site into ``out``; ``work`` keeps sources, doctrees and the execution cache."""
    check_dependencies()
    out = Path(out).expanduser().resolve()
    check_out(out)
    work = Path(work).expanduser().resolve() if work else default_work(out)
    from argnb.site.stage import stage

    start = time.perf_counter()
    lessons = stage(work / "src", sources)
    log = work / "sphinx.log"
    cmd = [
        sys.executable, "-m", "sphinx", "-b", "html", "-d", str(work / "doctrees"),
        "--keep-going", str(work / "src"), str(out),
    ]  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("built by `argnb course site`\n", encoding="utf-8")
    lines: list[str] = []
    with log.open("w", encoding="utf-8") as f:
        proc = subprocess.Popen(
            cmd,
            env=lesson_env(work, sources.root.resolve(), env),
            cwd=work,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            f.write(line)
            lines.append(line)
            if not quiet:
                print(line, end="", flush=True)
        code = proc.wait()
    if code != 0:
        last = next((ln.strip() for ln in reversed(lines) if ln.strip()), "no output")
        raise ArgnbError(f"the site build failed ({last[:200]})", hint=f"read {log}")
    text = "".join(lines)
    return SiteBuild(
        out=out,
        work=work,
        seconds=time.perf_counter() - start,
        executed=len(re.findall(r"Executing notebook using", text)),
        cached=len(_CACHED.findall(text)),
        pages=lessons,
        log=log,
    )


def cmd_site(args: argparse.Namespace, sources: Sources) -> int:
    """``argnb course site --out DIR [--work DIR] [--quiet]``."""
    built = build_site(args.out, sources, work=args.work, quiet=args.quiet)
    print(
        f"site in {built.out}: {len(built.pages)} lessons, {built.executed} executed, "
        f"{built.cached} from the cache, {built.seconds:.0f} s; open {built.out / 'index.html'} "
        "or serve the folder (python -m http.server -d DIR)"
    )
    return 0
