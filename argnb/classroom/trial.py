"""``argnb class try``: a whole class on this machine for an instructor to see before term.

The class model (llama.cpp's server with the embedded model, behind its own key), JupyterHub with
its proxy and the class gateway, all on 127.0.0.1 (:mod:`argnb.classroom.local`), and a few demo
learners: real local users with printed passwords, the course copied into each home at their
first login. Ctrl-C (or SIGTERM) stops every process and deletes the demo users and their homes.
It needs root (it creates users), configurable-http-proxy and the embedded model; the embedded
model is far too small to argue well: this shows how the class works, not how well a real model
argues (docs/deploy.md puts a real one behind the same gateway).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from argnb.errors import ArgnbError

PREFIX = "argnbtry"


def add_learner(name: str) -> str:
    """A local user with a private home; their password."""
    password = secrets.token_urlsafe(9)
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", name], check=True)
    os.chmod(f"/home/{name}", 0o700)
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True)
    return password


def remove_learner(name: str) -> None:
    """The user, every process of theirs and their home, gone."""
    subprocess.run(["pkill", "-KILL", "-u", name], check=False, capture_output=True)
    time.sleep(0.2)
    subprocess.run(["userdel", "--remove", name], check=False, capture_output=True)


def _exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _check(learners: int) -> None:
    from argnb.classroom.local import find_proxy
    from argnb.llm.download import embedded_gguf

    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        raise ArgnbError(
            "a trial class creates local users for its demo learners: it needs root",
            hint="sudo argnb class try, on a machine where you may add users",
        )
    if not shutil.which("useradd"):
        raise ArgnbError("no useradd here", hint="a Linux machine with the shadow utilities")
    if find_proxy() is None:
        raise ArgnbError(
            "configurable-http-proxy is not installed",
            hint="npm install -g configurable-http-proxy (JupyterHub's proxy)",
        )
    if embedded_gguf() is None:
        raise ArgnbError("the embedded model is not installed", hint="argnb model fetch")
    taken = [f"{PREFIX}{i}" for i in range(1, learners + 1) if _exists(f"{PREFIX}{i}")]
    if taken:
        raise ArgnbError(
            f"the users {', '.join(taken)} exist already (an earlier trial?)",
            hint=f"remove them: userdel --remove {taken[0]}",
        )


@contextlib.contextmanager
def trial_class(learners: int = 3, port: int | None = None) -> Iterator[dict]:
    """Everything running; yields the hub's URL and ``{user: password}``; stops it all after."""
    from argnb.classroom.local import Hub, ModelServer

    _check(learners)
    work = Path(tempfile.mkdtemp(prefix="argnb-try-"))
    names: list[str] = []
    try:
        with ModelServer(work) as model, Hub(
            work, model_url=model.url, model=model.alias, model_key_file=model.key_file(),
            port=port, limits={"tokens_per_day": 200_000},
        ) as hub:  # fmt: skip
            accounts = {}
            for i in range(1, learners + 1):
                names.append(f"{PREFIX}{i}")
                accounts[names[-1]] = add_learner(names[-1])
            yield {"url": hub.url, "accounts": accounts, "work": work, "hub": hub}
    finally:
        for name in names:
            remove_learner(name)
        shutil.rmtree(work, ignore_errors=True)


def run(learners: int, port: int | None) -> int:
    """The command: start, print how to log in, wait for Ctrl-C or SIGTERM, stop everything."""
    stop = threading.Event()

    def stopping(signum: int, frame: object) -> None:
        stop.set()

    old = {s: signal.signal(s, stopping) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        print("starting a trial class: the model server, JupyterHub, its proxy, the gateway ...")
        with trial_class(learners, port) as cls:
            print(f"\nthe class is at {cls['url']} (this machine only); log in as")
            for name, password in cls["accounts"].items():
                print(f"  {name}  password {password}")
            print(
                "each learner finds the course in ~/argnb-course at the first login. The model is "
                "the embedded SmolLM2-135M: far too small to argue well, enough to see the class "
                "work.\nCtrl-C stops everything and deletes these users.",
                flush=True,
            )
            while not stop.wait(0.5):
                pass
            print("stopping the class ...", flush=True)
        print("stopped: no process or demo user is left", flush=True)
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    return 0
