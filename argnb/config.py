"""Choosing a backend: explicit arguments, then environment, then a config file, then the default.

Order of precedence for each setting:
  1. arguments to :func:`connect`
  2. environment: ``ARGNB_BACKEND`` (local | ollama | openai | class), ``ARGNB_MODEL``, and the
     standard ``OLLAMA_HOST``, ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``; then the class server,
     when the hub set one up (``ARGNB_CLASS_URL``: :mod:`argnb.llm.classserver`)
  3. ``config.toml`` in the user's config dir (``argnb doctor`` prints where); API keys are never
     read from or written to it -- they stay in the environment
  4. the embedded default: SmolLM2-135M-Instruct in-process, so everything works offline.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from argnb.errors import ArgnbError, ConfigError
from argnb.llm.base import Backend, Options

BACKENDS = ("local", "ollama", "openai", "class")
#: the settings config.toml may hold, and their types
SETTINGS: dict[str, type | tuple[type, ...]] = {
    "backend": str,
    "model": str,
    "host": str,
    "base_url": str,
    "timeout": (int, float),
}
DEFAULT_MODELS = {"local": "smollm2-135m", "ollama": "llama3.2", "openai": "gpt-4o-mini"}

_default: Backend | None = None


def config_path() -> Path:
    """Where the optional config file lives."""
    from platformdirs import user_config_dir

    return Path(os.environ.get("ARGNB_CONFIG") or Path(user_config_dir("argnb")) / "config.toml")


def read_config() -> dict[str, Any]:
    """Settings from the config file ({} when there is none).

    A file that is not valid TOML, or holds a setting of the wrong type, raises a one-line
    :class:`~argnb.errors.ConfigError` naming the file and the line.
    """
    p = config_path()
    if not p.exists():
        return {}
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    fix = f"correct that line, or delete {p} to use the defaults"
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p} is not valid TOML: {exc}", hint=fix) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p} is not UTF-8 text ({exc.reason})", hint=fix) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read {p}: {exc.strerror or exc}", hint=fix) from exc
    data.pop("api_key", None)  # keys belong in the environment, never in files
    for key, kind in SETTINGS.items():
        value = data.get(key)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise ConfigError(
                f"{p}: setting {key!r} has the wrong type ({type(value).__name__})",
                hint=f'e.g. {key} = "..."' if kind is str else f"e.g. {key} = 60",
            )
    return data


def in_notebook() -> bool:
    """True inside a Jupyter kernel (where caching is on by default)."""
    return "ipykernel" in sys.modules


def _cache_enabled(cache: bool | None) -> bool:
    if cache is not None:
        return cache
    env = os.environ.get("ARGNB_CACHE")
    if env is not None:
        return env.strip().lower() not in ("0", "false", "no", "off", "")
    return in_notebook()


def resolve(backend: str | None = None, model: str | None = None) -> tuple[str, str]:
    """Which backend and model the settings point at."""
    from argnb.llm.classserver import class_settings

    cfg = read_config()
    klass = class_settings()
    default = "class" if klass is not None else cfg.get("backend") or "local"
    name = (backend or os.environ.get("ARGNB_BACKEND") or default).lower()
    if name not in BACKENDS:
        raise ArgnbError(
            f"unknown backend {name!r}",
            hint=f"use one of {', '.join(BACKENDS)} (ARGNB_BACKEND or connect(backend=...))",
        )
    if name == "class":
        if klass is None:
            raise ArgnbError(
                "no class server here",
                hint="the class backend works in a server the class hub started; "
                "use local, ollama or openai elsewhere",
            )
        return name, model or klass.model
    chosen = model or os.environ.get("ARGNB_MODEL") or cfg.get("model") or DEFAULT_MODELS[name]
    return name, chosen


def connect(
    backend: str | None = None,
    model: str | None = None,
    *,
    host: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
    cache: bool | None = None,
    options: Options | None = None,
    make_default: bool = True,
    **kw: Any,
) -> Backend:
    """Build a backend from arguments / environment / config and (by default) make it current::

    b = connect("local")                              # embedded SmolLM2, offline
    b = connect("ollama", "llama3.2")                 # needs `ollama serve`
    b = connect("openai", "gpt-4o-mini")              # needs OPENAI_API_KEY
    b = connect("openai", "m", base_url="http://127.0.0.1:8080/v1", api_key="none")
    b = connect("ollama", "llama3.2", timeout=30)     # give up on a request after 30 s

    ``timeout`` (seconds, default 120 or ``timeout`` in config.toml) bounds each try of a request
    to a server in total; requests are tried ``1 + max_retries`` times (3 by default). The
    embedded model has no timeout.
    """
    name, chosen = resolve(backend, model)
    cfg = read_config()
    common: dict[str, Any] = {"options": options, **kw}
    limit = timeout if timeout is not None else cfg.get("timeout")
    if limit is not None and (
        isinstance(limit, bool) or not isinstance(limit, int | float) or not 0 < limit < 1e6
    ):
        raise ArgnbError(
            f"timeout must be a positive number of seconds, not {limit!r}",
            hint="e.g. --timeout 60 (connect(timeout=60))",
        )
    remote = {} if limit is None else {"timeout": float(limit)}  # the local model needs none
    if _cache_enabled(cache):
        from argnb.llm.cache import ResponseCache

        common["cache"] = ResponseCache()
    if name == "class":
        from argnb.llm.classserver import ClassBackend, class_settings

        klass = class_settings()
        assert klass is not None  # resolve() checked
        b: Backend = ClassBackend(klass, chosen, **remote, **common)
        _allowance_as_one_line()
    elif name == "local":
        from argnb.llm.local import LocalBackend

        b = LocalBackend(chosen, **common)
    elif name == "ollama":
        from argnb.llm.ollama import OllamaBackend

        b = OllamaBackend(chosen, host=host or cfg.get("host"), **remote, **common)
    else:
        from argnb.llm.openai import OpenAIBackend

        b = OpenAIBackend(
            chosen, base_url=base_url or cfg.get("base_url"), api_key=api_key, **remote, **common
        )
    if make_default:
        set_default_backend(b)
    return b


def _allowance_as_one_line() -> None:
    """In a notebook, a used-up allowance prints its one line instead of a traceback.

    Only when no other handler is installed (the exercises' feedback installs its own)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None or getattr(shell, "custom_exceptions", ()):
        return
    from argnb.errors import AllowanceUsed

    def show(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Any = None) -> None:
        print(f"argnb: {getattr(value, 'message', value)}", file=sys.stderr)

    shell.set_custom_exc((AllowanceUsed,), show)


def set_default_backend(backend: Backend | None) -> None:
    """Make ``backend`` the one modules use when none is passed."""
    global _default
    _default = backend


def default_backend() -> Backend:
    """The current backend, connecting from environment/config on first use."""
    if _default is None:
        return connect()
    return _default
