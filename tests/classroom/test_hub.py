"""A class on one server, with real parts: JupyterHub from PyPI and configurable-http-proxy from
npm, real local users (PAM login, LocalProcessSpawner: real homes, real permissions), the class
gateway as a hub service, and llama.cpp's server with the embedded model as the class model.
Everything listens on 127.0.0.1 and stops with the module.

Needs root (to create users), configurable-http-proxy (``.ci/run`` installs it) and the embedded
model; skips with the reason otherwise.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from argnb.gate import REASONS
from tests.classroom.learners import Learner, add_system_user, remove_system_user

pytestmark = [pytest.mark.server, pytest.mark.model]
ROOT = Path(__file__).resolve().parents[2]
LIMIT = 200_000


def _skip_reason() -> str | None:
    from argnb.classroom.local import find_proxy
    from argnb.llm.download import embedded_gguf

    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "creating real local users needs root"
    if not shutil.which("useradd") or not shutil.which("chpasswd"):
        return "needs useradd and chpasswd"
    if find_proxy() is None:
        return "needs configurable-http-proxy (npm install configurable-http-proxy)"
    if embedded_gguf() is None:
        return "needs the embedded model (make lab installs it)"
    import site

    from argnb.classroom.local import world_readable

    for path in [ROOT / "argnb", *map(Path, site.getsitepackages())]:
        if not world_readable(path):
            return f"learners' servers cannot read {path} (a checkout in a private home)"
    return None


def lesson_cells() -> str:
    """Lesson 01's setup cell and its first model cell, as a learner runs them."""
    cells = json.loads((ROOT / "notebooks/01_fallacy_deliberation.ipynb").read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    setup = next(c for c in code if "backend = argnb.connect(" in c)
    first = next(c for c in code if "classify(" in c and "my_argument" in c)
    return setup + "\n" + first


REPORT = """
import json
from argnb.llm.ledger import default_ledger
calls = [e for e in default_ledger().entries if not e.cached]
print(json.dumps({"backend": backend.describe(), "calls": len(calls),
                  "tokens": sum(e.prompt_tokens + e.completion_tokens for e in calls)}))
"""

DEBATE_STEP = """
from argnb.debate import Debater
topic = "Cities should ban private cars from their centres"
history = [("con", "Shops in the centre would lose the customers who come by car.")]
turn = Debater(backend, "llm", name="Pro", words=40).next(topic, history, stance="pro")
print("debate turn:", len(turn.text.split()), "words")
"""

PROBE = """
import glob, json, os
other, uid = {other!r}, {uid}
found = {{"processes": 0, "environ_read": 0, "home": None}}
for proc in glob.glob("/proc/[0-9]*"):
    try:
        if os.stat(proc).st_uid != uid:
            continue
    except OSError:
        continue
    found["processes"] += 1
    try:
        with open(proc + "/environ", "rb") as f:
            found["environ_read"] += b"JUPYTERHUB_API_TOKEN" in f.read()
    except OSError:
        pass
try:
    os.listdir("/home/" + other)
    found["home"] = "listed"
except PermissionError:
    found["home"] = "denied"
found["own_token"] = bool(os.environ.get("JUPYTERHUB_API_TOKEN"))
print(json.dumps(found))
"""

MODEL_PROBE = """
import glob, json, os, urllib.error, urllib.request
url, key, key_file, private = {url!r}, {key!r}, {key_file!r}, {private!r}
seen = {{"status": None, "key_seen": 0, "key_file": None, "opened": []}}
body = {{"messages": [{{"role": "user", "content": "hi"}}], "max_tokens": 2}}
request = urllib.request.Request(url + "/chat/completions", data=json.dumps(body).encode(),
                                 headers={{"Content-Type": "application/json"}})
try:
    urllib.request.urlopen(request, timeout=60)
    seen["status"] = 200
except urllib.error.HTTPError as e:
    seen["status"] = e.code
for path in glob.glob("/proc/[0-9]*/cmdline") + glob.glob("/proc/[0-9]*/environ"):
    try:
        with open(path, "rb") as f:
            seen["key_seen"] += key.encode() in f.read()
    except OSError:
        pass
try:
    open(key_file).close()
    seen["key_file"] = "read"
except PermissionError:
    seen["key_file"] = "denied"
for path in private:  # the gateway's database, its folder, the rooms folder
    try:
        open(path).close() if not path.endswith("/") else os.listdir(path)
        seen["opened"].append(path)
    except PermissionError:
        pass
print(json.dumps(seen))
"""


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    from argnb.classroom.local import Hub, ModelServer

    work = tmp_path_factory.mktemp("class")
    tag = secrets.token_hex(2)
    names = [f"argnbt{tag}{i}" for i in range(4)]
    gateway_user = f"argnbg{tag}"
    learners: list[Learner] = []
    try:
        add_system_user(gateway_user)
        with (
            ModelServer(work) as model,
            Hub(
                work,
                model_url=model.url,
                model=model.alias,
                limits={"tokens_per_day": LIMIT},
                # the fourth user is also the instructor (a hub admin): they read the usage page
                extra_config=f"c.Authenticator.admin_users = {{{names[3]!r}}}",
                model_key_file=model.key_file(),
                gateway_user=gateway_user,
            ) as hub,
        ):
            for name in names:
                learners.append(Learner(hub.url, name, add_system_user(name)))
            with ThreadPoolExecutor(4) as pool:
                list(pool.map(lambda lr: (lr.login(), lr.spawn()), learners))
            yield hub, model, learners, work
    finally:
        for name in [*names, gateway_user]:
            remove_system_user(name)


def _usage(hub) -> dict[str, dict[str, int]]:
    from argnb.classroom.usage import UsageStore

    per: dict[str, dict[str, int]] = {}
    for r in UsageStore(f"sqlite:///{hub.db}").summary():
        d = per.setdefault(r["user"], {"tokens": 0, "requests": 0, "failed": 0, "estimated": 0})
        d["tokens"] += r["prompt_tokens"] + r["completion_tokens"]
        d["requests"] += r["requests"]
        d["failed"] += r["failed"]
        d["refused"] = d.get("refused", 0) + r["refused"]
        d["estimated"] += r["estimated_tokens"]
        d.setdefault("lessons", set()).add(r["lesson"])  # type: ignore[union-attr]
    return per


def test_three_learners_run_a_lesson_cell_and_a_debate_step_through_the_gateway(classroom):
    hub, _, learners, _ = classroom
    first = lesson_cells()

    def lesson(lr: Learner) -> dict:
        kernel = lr.open_notebook("01_fallacy_deliberation.ipynb")
        for code in (first, DEBATE_STEP):
            out = lr.run(kernel, code)
            assert out.status == "ok", f"{lr.name}: {out.error}\n{out.traceback[-2000:]}"
        report = lr.run(kernel, REPORT).last_json()
        doctor = lr.run(kernel, "from argnb.doctor import check_class\nprint(check_class().detail)")
        return {**report, "doctor": doctor.stdout.strip()}

    with ThreadPoolExecutor(3) as pool:
        reports = dict(
            zip([lr.name for lr in learners[:3]], pool.map(lesson, learners[:3]), strict=True)
        )
    usage = _usage(hub)
    for name, rep in reports.items():
        # nothing configured by the learner: the hub's settings made the class server the default
        assert rep["backend"]["backend"] == "class", rep
        assert rep["backend"]["base_url"] == hub.gateway
        assert rep["calls"] >= 2 and rep["tokens"] > 0
        # every token the model server counted for the learner's kernel is on the learner's own
        # rows; streams that llama-cpp-python's server sends without counts are estimated there
        # (and the kernel's ledger has 0 for them): the rows say which
        mine = usage[name]
        assert mine["tokens"] - mine["estimated"] == rep["tokens"], (name, mine, rep)
        # each reply the kernel got is one request that went well; the failures are the
        # structured-output step-down (the server refuses json_schema once), with no tokens
        assert mine["requests"] - mine["failed"] == rep["calls"], (name, mine, rep)
        assert usage[name]["lessons"] == {"01_fallacy_deliberation"}
        assert rep["doctor"].startswith("class server: argnb test class via JupyterHub")
        assert f"{LIMIT - mine['tokens']:,} of {LIMIT:,} tokens left" in rep["doctor"]


def test_a_learner_over_the_limit_reads_one_line_and_the_reference_session_still_runs(classroom):
    hub, _, learners, _ = classroom
    lr = learners[3]
    kernel = lr.open_notebook("01_fallacy_deliberation.ipynb")
    first = lr.run(kernel, lesson_cells())
    assert first.status == "ok", first.traceback[-2000:]
    # the instructor, on the hub host, lowers this learner's allowance below what they used
    subprocess.run(
        [sys.executable, "-m", "argnb.cli", "class", "limits", lr.name,
         "--tokens-per-day", "100", "--db", f"sqlite:///{hub.db}"],
        check=True, capture_output=True,
    )  # fmt: skip
    second = lr.run(kernel, "classify('Cats are better than dogs because I say so.', backend)")
    line = "argnb: today's 100 tokens are used; your instructor can raise it"
    assert second.stderr.strip() == line, second
    assert "Traceback" not in second.stdout + second.stderr + second.traceback
    replay = lr.run(
        kernel,
        "from argnb.fallacy.reference import load_reference, replay_reference\n"
        "print(len(replay_reference(load_reference()).transcript.turns))",
    )
    assert replay.status == "ok" and int(replay.stdout) > 2, replay
    usage = _usage(hub)[lr.name]
    assert usage["refused"] == 1  # the refused request, recorded with no tokens


def test_no_token_a_wrong_token_or_a_token_without_access_is_refused(classroom):
    hub, _, learners, _ = classroom
    body = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
    url = hub.gateway + "/chat/completions"
    assert httpx.post(url, json=body).status_code == 401
    wrong = {"Authorization": "Bearer " + secrets.token_hex(16)}
    assert httpx.post(url, json=body, headers=wrong).status_code == 401
    narrow = hub.token(learners[0].name, scopes=["read:users:name!user"])
    assert (
        httpx.post(url, json=body, headers={"Authorization": f"Bearer {narrow}"}).status_code == 401
    )
    # a token revoked, or expired, at the hub is refused within the gateway's cache time
    from argnb.classroom.gateway import TOKEN_CACHE_S
    from argnb.classroom.hub import access_scope

    name = learners[2].name
    made = [
        hub.api("POST", f"/users/{name}/tokens", json={"scopes": [access_scope()], **extra})
        for extra in ({}, {"expires_in": 2})
    ]
    for t in made:
        r = httpx.get(hub.gateway + "/models", headers={"Authorization": f"Bearer {t['token']}"})
        assert r.status_code == 200, r.text
    hub.api("DELETE", f"/users/{name}/tokens/{made[0]['id']}")
    time.sleep(TOKEN_CACHE_S + 1.5)
    for t in made:
        r = httpx.get(hub.gateway + "/models", headers={"Authorization": f"Bearer {t['token']}"})
        assert r.status_code in (401, 403), (t.get("expires_at"), r.status_code)
    page = hub.gateway.rsplit("/v1", 1)[0] + "/"
    own = {"Authorization": f"Bearer {learners[0].token}"}
    assert httpx.get(page + "usage.json", headers=own).status_code == 403
    # the fourth user, a hub admin (the instructor), reads the page and its data
    key = {"Authorization": f"Bearer {learners[3].token}"}
    data = httpx.get(page + "usage.json", headers=key).json()
    assert {r["user"] for r in data["usage"]} >= {lr.name for lr in learners[:3]}
    html = httpx.get(page, headers=key).text
    assert "<svg" in html and all(lr.name in html for lr in learners[:3])


def test_another_sites_form_riding_the_gateways_cookie_is_refused_and_costs_nothing(classroom):
    hub, _, learners, _ = classroom
    lr = learners[2]
    browser = Learner(hub.url, lr.name, lr.password)  # the learner's browser, logged in
    browser.login_form()
    service = f"{hub.url}/services/argnb-gateway/"
    page = browser.client.get(service, follow_redirects=True)  # the hub's OAuth: the cookie
    assert page.status_code == 403  # the instructor's page; a learner is logged in all the same
    assert any("argnb-gateway" in c for c in browser.client.cookies)  # service-argnb-gateway
    before = _usage(hub).get(lr.name, {}).get("requests", 0)
    form = {"Content-Type": "text/plain", "Origin": "http://evil.example"}
    body = b'{"messages": [{"role": "user", "content": "spend it"}], "x": "='
    for path in ("v1/chat/completions", "rooms"):
        r = browser.client.post(service + path, content=body, headers=form)
        assert r.status_code == 403 and "header only" in r.text, (path, r.status_code, r.text)
    r = browser.client.get(service + "v1/argnb/allowance")
    assert r.status_code == 403
    assert _usage(hub).get(lr.name, {}).get("requests", 0) == before


def test_no_learner_can_read_another_learners_token_environment_or_home(classroom):
    _, _, learners, _ = classroom
    a, b = learners[0], learners[1]
    uid = int(subprocess.run(["id", "-u", b.name], capture_output=True, text=True).stdout)
    kernel = a.open_notebook("probe.ipynb")
    found = a.run(kernel, PROBE.format(other=b.name, uid=uid)).last_json()
    assert found["processes"] >= 2, found  # b's server and kernel were there to be probed
    assert found["environ_read"] == 0 and found["home"] == "denied", found
    assert found["own_token"]  # a's own kernel holds a's token: that is how a is known


def test_a_learners_kernel_reaches_neither_the_model_server_nor_the_gateways_files(classroom):
    import stat

    hub, model, learners, work = classroom
    # the gateway dropped root for its own user; what it keeps is that user's alone
    gateway = [  # this hub's child (other tests' hubs may be running beside it)
        p for p in Path("/proc").glob("[0-9]*")
        if b"argnb.classroom.gateway" in _read(p / "cmdline")
        and _read(p / "stat").rsplit(b")", 1)[-1].split()[1] == str(hub.proc.pid).encode()
    ]  # fmt: skip
    owner = subprocess.run(["id", "-u", hub.gateway_user], capture_output=True, text=True)
    assert [p.stat().st_uid for p in gateway] == [int(owner.stdout)]
    rooms = hub.db.parent / "argnb-rooms"
    for path, mode in ((hub.db, 0o600), (hub.db.parent, 0o700), (rooms, 0o700)):
        st = path.stat()
        assert (stat.S_IMODE(st.st_mode), st.st_uid) == (mode, int(owner.stdout)), path
    kernel = learners[1].open_notebook("direct.ipynb")
    private = [str(hub.db), f"{hub.db.parent}/", f"{rooms}/"]
    probe = MODEL_PROBE.format(
        url=model.url, key=model.key, key_file=str(work / "model-server.key"), private=private
    )
    seen = learners[1].run(kernel, probe).last_json()
    # the port is in the process list, but without the key (only the gateway holds it) the
    # model server refuses; the key is in no command line or environment a learner can read
    assert seen == {"status": 401, "key_seen": 0, "key_file": "denied", "opened": []}, seen


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def test_a_request_costs_what_the_model_server_counts(classroom):
    hub, model, learners, _ = classroom
    body = {
        "model": model.alias,
        "messages": [{"role": "user", "content": "Name one reason to walk to school."}],
        "max_tokens": 16,
        "temperature": 0,
    }
    direct = httpx.post(
        model.url + "/chat/completions", json=body, headers=model.headers, timeout=120
    ).json()["usage"]
    before = _usage(hub)[learners[2].name]["tokens"]
    via = httpx.post(
        hub.gateway + "/chat/completions",
        json=body,
        headers={"Authorization": f"Bearer {learners[2].token}"},
        timeout=120,
    ).json()["usage"]
    assert via == direct
    after = _usage(hub)[learners[2].name]["tokens"]
    assert after - before == direct["prompt_tokens"] + direct["completion_tokens"]


HAND_IN = """
import base64, os
folder = os.path.expanduser("~/argnb-course/exercises/02_dialectic/student")
os.makedirs(folder, exist_ok=True)
target = os.path.join(folder, "ex2_grounded.ipynb")
data, link = {data!r}, {link!r}
if os.path.lexists(target):  # the copy the course put there at the first login
    os.remove(target)
if link:
    os.symlink(link, target)  # the attack: hand in a file the learner cannot read
    print(os.readlink(target))
else:
    with open(target, "wb") as f:
        f.write(base64.b64decode(data))
    print("handed in", len(data))
"""

PLANT = """
import os
folder = os.path.expanduser("~/argnb-course/feedback")
os.makedirs(folder, exist_ok=True)
os.symlink({target!r}, os.path.join(folder, "02_dialectic.html"))
print(os.readlink(os.path.join(folder, "02_dialectic.html")))
"""


def _cli(*args: str, timeout: float = 600) -> str:
    r = subprocess.run([sys.executable, "-m", "argnb.cli", *args], capture_output=True, text=True,
                       timeout=timeout)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_collect_grade_return_leaves_each_page_only_in_its_owners_home(classroom, tmp_path):
    import base64

    hub, _, learners, _ = classroom
    a, b, c, d = learners
    exercise = ROOT / "exercises/02_dialectic"
    solved = base64.b64encode((exercise / "solutions/ex2_grounded.ipynb").read_bytes()).decode()
    blank = base64.b64encode((exercise / "student/ex2_grounded.ipynb").read_bytes()).decode()
    for lr, data, link in ((a, solved, ""), (b, blank, ""), (c, "", "/etc/shadow")):
        out = lr.run(lr.open_notebook("hand_in.ipynb"), HAND_IN.format(data=data, link=link))
        assert out.status == "ok", out.traceback[-2000:]
    assert c.run(c.open_notebook("x.ipynb"), "import os; print(os.path.islink("
                 "os.path.expanduser('~/argnb-course/exercises/02_dialectic/student/"
                 "ex2_grounded.ipynb')))").stdout.strip() == "True"  # fmt: skip
    # d plants a link where its feedback would go, pointing at a's page
    a_page = f"/home/{a.name}/argnb-course/feedback/02_dialectic.html"
    assert d.run(d.open_notebook("p.ipynb"), PLANT.format(target=a_page)).stdout.strip() == a_page
    homes = ["--homes", "/home", "--only", ",".join(lr.name for lr in learners)]
    subs, fb = tmp_path / "subs", tmp_path / "fb"
    said = _cli("class", "collect", "02_dialectic", "--to", str(subs), *homes)
    assert f"{c.name}: refused ex2_grounded.ipynb: a link" in said, said
    # d handed nothing in: the course copied into its home at its first login is collected as it
    # came (it scores 0), and so are the exercise's other notebooks of everyone, c's included;
    # the copy is d's own
    assert sorted(p.name for p in subs.iterdir() if p.is_dir()) == sorted(
        lr.name for lr in learners
    )
    assert not (subs / c.name / "ex2_grounded.ipynb").exists()  # the link was refused
    home_copy = Path(
        f"/home/{d.name}/argnb-course/exercises/02_dialectic/student/ex2_grounded.ipynb"
    )
    assert (subs / d.name / "ex2_grounded.ipynb").read_bytes() == home_copy.read_bytes()
    uid = int(subprocess.run(["id", "-u", d.name], capture_output=True, text=True).stdout)
    assert Path(f"/home/{d.name}/argnb-course/START_HERE.ipynb").stat().st_uid == uid
    assert b"root:" not in b"".join(p.read_bytes() for p in subs.rglob("*") if p.is_file())
    _cli("exercises", "grade", str(subs), "--exercise", "02_dialectic", "--out",
         str(tmp_path / "grades.csv"), "--feedback", str(fb), "--jobs", "2")  # fmt: skip
    from argnb.exercises.submissions import page_name

    (fb / f"{page_name(d.name)}.html").write_text("<p>a page for d, who handed nothing in</p>")
    (subs / d.name).mkdir(exist_ok=True)
    returned = _cli("class", "return", "02_dialectic", "--feedback", str(fb), "--submissions",
                    str(subs), *homes)  # fmt: skip
    assert f"{d.name}: not returned" in returned, returned  # d's link was not followed
    for lr in (a, b, c):  # c's refused notebook scores 0, its other notebooks are graded
        page = Path(f"/home/{lr.name}/argnb-course/feedback/02_dialectic.html")
        st = page.lstat()
        uid = int(subprocess.run(["id", "-u", lr.name], capture_output=True, text=True).stdout)
        assert st.st_uid == uid and oct(st.st_mode & 0o777) == "0o600"
        assert page.read_text() == (fb / f"{page_name(lr.name)}.html").read_text()
        assert lr.name in page.read_text()
    assert Path(a_page).read_text() == (fb / f"{page_name(a.name)}.html").read_text()
    assert os.path.islink(f"/home/{d.name}/argnb-course/feedback/02_dialectic.html")
    # the class report: grades beside each learner's model use
    report = tmp_path / "report.html"
    _cli("class", "report", "02_dialectic", "--grades", str(tmp_path / "grades.csv"), "--db",
         f"sqlite:///{hub.db}", "--out", str(report))  # fmt: skip
    html = report.read_text()
    full = re.search(rf"<td[^>]*>{a.name}</td><td[^>]*>(\d+) / (\d+)</td><td[^>]*>(\d+)</td>", html)
    assert full and full.group(1) != "0" and int(full.group(3)) > 0, html  # points and model use
    for lr in (c, d):  # nothing of theirs scored: the untouched copies, the refused link
        assert re.search(rf"<td[^>]*>{lr.name}</td><td[^>]*>0 / \d+</td>", html), html


OPEN_CELL = """
from argnb.roundtable import RoomWidget
RoomWidget("Should homework allow AI tools?", turns=4)
"""
JOIN_CELL = """
from argnb.roundtable import RoomWidget
RoomWidget()
"""


def _lab(browser, hub_url: str, lr: Learner, notebook: str):
    """A learner's own browser: the hub's login form, then the notebook in their JupyterLab."""
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    page = context.new_page()
    page.goto(f"{hub_url}/hub/login", timeout=90_000)
    page.fill("input[name=username]", lr.name)
    page.fill("input[name=password]", lr.password)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/(hub/home|hub/spawn.*|user/.*)$"), timeout=90_000)
    page.goto(f"{hub_url}/user/{lr.name}/lab/tree/{notebook}", timeout=90_000)
    return page


def test_two_learners_sit_at_one_room_in_their_own_jupyterlab(classroom):
    """Two learners' JupyterLab pages on the hub, one room: one opens it, the other joins by its
    code; one reloads the saved page while holding the floor and sends from the same seat (issue
    35); each sees the other's turn, the shared analyzer and map, and the ranking step, and
    ranks through the widget; the count names both."""
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    from tests.roundtable.browser import CHROMIUM, run_first_cell

    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed")
    hub, _, learners, _ = classroom
    a, b = learners[0], learners[1]
    a.put_notebook("room.ipynb", OPEN_CELL)
    b.put_notebook("room.ipynb", JOIN_CELL)
    # each notebook's kernel is running before its page opens (JupyterLab joins that session):
    # a page that starts its own asked "Select Kernel" once on a loaded machine, when its list of
    # kernels had not arrived in time -- a dialog no learner of a running notebook sees
    for lr in (a, b):
        lr.open_notebook("room.ipynb")
    words = {a.name: "Explanations from AI help me, copied answers do not", b.name:
             "A class rule beats a ban: we say when AI may help"}  # fmt: skip
    dialogs: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        pages = {lr.name: _lab(browser, hub.url, lr, "room.ipynb") for lr in (a, b)}
        for page in pages.values():
            run_first_cell(page, "room.ipynb", page.locator(".argnb-room-join"), dialogs)
        pa, pb = pages[a.name], pages[b.name]
        pa.locator(".argnb-room-open").click()
        code_box = pa.locator(".argnb-room-code", has_text=re.compile(r"[A-Z0-9]{8}"))
        code_box.wait_for(timeout=60_000)
        code = re.search(r"\b[A-Z0-9]{8}\b", code_box.inner_text()).group()  # type: ignore[union-attr]
        pb.locator(".argnb-room-code-input input").fill(code)
        pb.locator(".argnb-room-join").click()
        # the discussion: whoever holds the floor types and sends, until the closing's ranking
        said = {a.name: 0, b.name: 0}
        reloaded = False
        end = time.monotonic() + 600
        while not all(p.locator(".argnb-room-rank").count() for p in pages.values()):
            assert time.monotonic() < end, "no ranking step within 10 min: " + pa.locator(
                ".argnb-room-status").inner_text()  # fmt: skip
            for name, page in pages.items():
                box = page.locator(".argnb-room-input textarea")
                if name == b.name and not reloaded and box.count() and box.is_enabled():
                    # b reloads the page while holding the floor (issue 35): the saved notebook
                    # comes back with the live widget, and Send works from the same seat
                    reloaded = True
                    page.locator(".jp-Notebook").first.click()
                    page.keyboard.press("Control+s")
                    page.wait_for_timeout(2000)
                    page.on("dialog", lambda d: d.accept())
                    page.reload(timeout=90_000)
                    box = page.locator(".argnb-room-input textarea")
                    box.wait_for(timeout=120_000)
                    page.wait_for_function(
                        "() => { const t = document.querySelector('.argnb-room-input textarea');"
                        " return !!t && !t.disabled; }",
                        timeout=60_000,
                    )
                if box.count() and box.is_enabled():
                    said[name] += 1
                    box.fill(f"{words[name]} ({said[name]}).")
                    page.locator(".argnb-room-send").click()
                    page.wait_for_timeout(500)
                # each raises a hand to be heard (given the floor within 3 turns, so both speak
                # within the room's 4), and once heard says it is ready to end
                button = page.locator(".argnb-room-ready" if said[name] else ".argnb-room-hand")
                if button.count() and button.is_enabled():
                    button.click()
            pa.wait_for_timeout(1000)
        assert reloaded, "b never held the floor"
        assert said[a.name] and said[b.name], (
            said,
            pa.locator(".argnb-room-dialogue").inner_text(),
        )
        # each sees the other's words in the shared transcript
        for me, other in ((a, b), (b, a)):
            shown = pages[me.name].locator(".argnb-room-dialogue").inner_text()
            assert words[other.name] in shown and other.name in shown, (me.name, shown[-2000:])
        # the shared analyzer: the same panel on both pages (a map, or why there is none)
        panels = [p.locator(".argnb-room-analysis").inner_text() for p in pages.values()]
        assert panels[0] == panels[1] and panels[0].strip(), panels
        maps = [p.locator(".argnb-room-map").inner_html() for p in pages.values()]
        assert maps[0] == maps[1], "the two seats see different maps"
        # the ranking step, on both pages: each ranks through the widget, a reversed, b in order
        for name, page in pages.items():
            ranks = page.locator(".argnb-room-rank select")
            n = ranks.count()
            assert n >= 2, f"{name}: {n} candidates to rank"
            order = list(range(1, n + 1))
            for i, r in enumerate(order[::-1] if name == a.name else order):
                ranks.nth(i).select_option(label=str(r))
            page.locator(".argnb-room-submit-rank").click()
        for page in pages.values():
            outcome = page.locator(".argnb-room-outcome", has_text="Schulze")
            outcome.wait_for(timeout=300_000)
            text = outcome.inner_text()
            assert a.name in text and b.name in text, text
            # the candidates and the chosen statement are a learner's or a usable answer's
            # words, never the gate's (issue 35: "This answer cannot be used." was ranked)
            closing = page.locator(".argnb-room-closing").inner_text()
            gate_words = [*REASONS.values(), "cannot be used", "{{", "<text>"]
            assert not [x for x in gate_words if x in closing], closing
            page.screenshot(path=str(Path(hub.workdir) / f"room-{code}.png"))
        browser.close()
    # JupyterLab's "Select Kernel" still comes now and then on a loaded machine (its list of
    # sessions arrives after the notebook; one of two clean-clone runs of 9532f90). A learner
    # answers it with the default, as lab_dialogs did, and the room went on to its count above;
    # any other dialog is a failure
    assert [d for d in dialogs if not d.startswith("Select Kernel")] == [], dialogs
    import stat

    kept = list((hub.db.parent / "argnb-rooms").glob("*.json"))
    assert kept and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in kept), kept
