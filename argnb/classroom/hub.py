"""One call in ``jupyterhub_config.py`` puts a class on the hub::

    from argnb.classroom.hub import configure
    configure(c, model_url="http://127.0.0.1:8000/v1", model="Qwen/Qwen2.5-7B-Instruct",
              limits={"tokens_per_day": 200_000, "concurrent": 2})

It adds the gateway as a hub-managed service, lets every learner's server token reach it (and
nothing more), and hands every learner's server the class settings through the spawner's
environment, so argnb in a learner's kernel uses the class model with no setup. The model
server's key goes to the gateway's environment only: read from ``api_key_file`` when the hub
starts (a file only root reads: the key stays out of the config file), or ``api_key=``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from argnb.classroom.usage import Limits

SERVICE = "argnb-gateway"


def access_scope(service: str = SERVICE) -> str:
    """The scope a token needs to call the gateway."""
    return f"access:services!service={service}"


def _set(section: Any, name: str, empty: Any) -> Any:
    """A copy of what the config file already set (traitlets gives a lazy value for unset keys)."""
    value = section.get(name, empty)
    return type(empty)(value)


def _read_key(path: Path) -> str:
    """The model server's key from ``path``: one line, the file readable by its owner only."""
    from argnb.errors import ArgnbError

    try:
        mode = path.stat().st_mode
        key = path.read_text().strip()
    except OSError as exc:
        raise ArgnbError(
            f"cannot read the model server's key file {path}: {exc.strerror}",
            hint="write the key into it (one line) as the hub's user",
        ) from None
    if mode & 0o077:
        raise ArgnbError(
            f"{path} can be read by other users: anyone with it can spend the class's tokens",
            hint=f"chmod 600 {path}",
        )
    if not key or "\n" in key:
        raise ArgnbError(f"{path} should hold the key on one line", hint="echo KEY > the file")
    return key


def configure(
    c: Any,
    *,
    model_url: str,
    model: str,
    limits: dict[str, int] | None = None,
    api_key: str | None = None,
    api_key_file: str | None = None,
    class_name: str = "class server",
    port: int = 8181,
    db_url: str | None = None,
    slots: int = 4,
    max_tokens: int = 2048,
    service: str = SERVICE,
    python: str | None = None,
    rooms_dir: str | None = None,
    answer_s: float = 120.0,
    room_fallacy: bool = False,
    user: str | None = None,
    course: str | None = "argnb-course",
) -> None:
    """Add the gateway service, its roles and the learners' environment to a hub config ``c``.

    ``model_url`` is the model server's OpenAI-compatible API root (vLLM, llama.cpp's server,
    Ollama's ``/v1``, or a hosted API). Its key (``api_key_file``, or ``api_key``) is what keeps
    learners from calling it directly: on one machine they can reach its port. ``slots`` is how
    many requests it runs at once; ``limits`` holds each learner's ``tokens_per_day``,
    ``concurrent`` and ``waiting``. Rooms (several learners at one roundtable) keep their
    transcripts in ``rooms_dir`` (default: ``argnb-rooms`` beside a SQLite ``db_url``) and pass
    over a learner after ``answer_s``;
    ``room_fallacy`` has every turn of a room fallacy-checked (one more model call per turn; the
    flags show in every seat's panel). ``user`` is the system user the gateway becomes once it
    has taken its files over (the hub starts it as root): learners' kernels on the same machine
    then cannot open its database or rooms (0600 files, 0700 folders either way). ``course``: the
    folder of each learner's home the course is copied into when their server starts (new lessons
    added, untouched files updated, their edits kept; ``None``: not copied).
    """
    lim = Limits(**(limits or {}))
    if api_key_file:
        api_key = _read_key(Path(api_key_file))
    url = f"http://127.0.0.1:{port}"
    db = db_url or f"sqlite:///{Path.cwd() / 'argnb-usage.sqlite'}"
    env = {
        "ARGNB_GATEWAY_UPSTREAM": model_url,
        "ARGNB_GATEWAY_MODEL": model,
        "ARGNB_GATEWAY_LIMITS": json.dumps(lim.__dict__),
        "ARGNB_GATEWAY_SLOTS": str(slots),
        "ARGNB_GATEWAY_MAX_TOKENS": str(max_tokens),
        "ARGNB_GATEWAY_DB": db,
        "ARGNB_CLASS_NAME": class_name,
        "ARGNB_GATEWAY_ANSWER_S": str(answer_s),
        "ARGNB_GATEWAY_ROOM_FALLACY": "1" if room_fallacy else "0",
    }
    if rooms_dir:
        env["ARGNB_GATEWAY_ROOMS"] = rooms_dir
    if user:
        env["ARGNB_GATEWAY_USER"] = user
    if api_key:
        env["ARGNB_GATEWAY_UPSTREAM_KEY"] = api_key
    services = _set(c.JupyterHub, "services", [])
    services.append(
        {
            "name": service,
            "url": url,
            "command": [python or sys.executable, "-m", "argnb.classroom.gateway"],
            "environment": env,
            "oauth_no_confirm": True,
            "display": True,
        }
    )
    c.JupyterHub.services = services

    scope = access_scope(service)
    roles = [
        r for r in _set(c.JupyterHub, "load_roles", []) if r.get("name") not in ("user", service)
    ]
    # every learner may call the gateway; the gateway may read who is an admin (its page)
    roles.append({"name": "user", "scopes": ["self", scope]})
    roles.append({"name": service, "scopes": ["read:users"], "services": [service]})
    c.JupyterHub.load_roles = roles
    # the token in each learner's server ($JUPYTERHUB_API_TOKEN) carries the access scope too
    c.Spawner.server_token_scopes = ["users:activity!user", "access:servers!server", scope]

    prefix = f"/services/{service}/"
    environment = _set(c.Spawner, "environment", {})
    environment.update(
        {
            "ARGNB_CLASS_NAME": class_name,
            "ARGNB_CLASS_URL": f"{url}{prefix}v1",
            "ARGNB_CLASS_MODEL": model,
        }
    )
    c.Spawner.environment = environment
    if course:
        _copy_course_at_start(c, course)


def _copy_course_at_start(c: Any, course: str) -> None:
    """Wrap the spawner's command: the learner's server copies the course into their home first
    (:mod:`argnb.classroom.singleuser`, as the learner: nothing of theirs is touched as root)."""
    cmd = _set(c.Spawner, "cmd", ["jupyterhub-singleuser"])
    if "argnb.classroom.singleuser" in cmd:
        return  # configured twice
    first = Path(cmd[0])
    # the learners' Python: the command's own, or the one beside jupyterhub-singleuser
    python = str(first if first.name.startswith("python") else first.parent / "python")
    if not first.is_absolute() and not first.name.startswith("python"):
        python = "python3"
    c.Spawner.cmd = [python, "-m", "argnb.classroom.singleuser", course, "--", *cmd]
