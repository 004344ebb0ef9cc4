"""Build the sdist and wheel, install the wheel into a fresh venv and use it.

Usage: python packaging/install_check.py [--full] [--json] [--keep DIR]

Part of ``make test``. It proves what the editable install of the Makefile
cannot: that the distribution people get works.

1. ``python -m build`` makes the sdist, then the wheel *from that sdist* (so a
   file the sdist lacks is missing from the wheel too), over a ``build/lib``
   holding a module that is not in the source, as an earlier build of a checkout
   leaves one. A "package would be ignored" warning from setuptools fails the
   check.
2. Both archives must hold the launcher (``ambry/``), every package under
   ``core/`` and ``desktop/`` and every file of ``resources/``; the wheel keeps
   the three in ``ambry/_app/``, the sdist as in the repository, with the
   LICENSE, README and setup.py. The wheel must not hold the stale module.
3. The wheel goes into a new venv, not editable. By default it is installed with
   ``--no-deps`` and the venv sees the dependencies of the development venv
   through one ``.pth`` line (a plain path: the development venv's own ``.pth``
   files, among them the editable finder for this source tree, are not run), then
   ``pip check`` proves the wheel's declared requirements are met. ``--full``
   installs the dependencies from the package index instead (slower; ``make
   bench`` and ``bench/install.py`` use it for the install-time figure).
4. The install puts nothing but ``ambry`` and its dist-info at the top of
   site-packages: no ``core``, ``desktop`` or ``resources`` to import there.
5. From a directory outside the source tree, with the venv's ``ambry``: the
   launcher's imports come from ``ambry/_app`` in the venv; ``ambry
   --self-test``; an MCP ``initialize``, ``tools/list`` and a
   ``memory_store``/``memory_search`` call to the server started as the entry
   of ``ambry setup`` says; a CLI ``store``/``search`` round trip; the Python
   client example of docs/protocol.md and ``examples/agent.py``, run with the
   venv's Python against its ``ambry serve``; and the re-launches (``python -m
   ambry``, and ``ambry doctor`` timing ``python -m ambry mcp``).
6. Another distribution with its own top-level ``core`` and ``resources`` (a
   wheel built here, whose ``.pth`` file imports its ``core`` whenever Python
   starts) goes into the same venv: ``import core`` must give its module, and
   every check of step 5 runs again and must still pass.

Prints one ``ok`` line per step (or JSON with ``--json``) and exits 1 on the
first failure with what went wrong.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The packages the wheel keeps in ambry/_app/ rather than at the top of site-packages,
# as the launcher names them (importing it changes nothing).
from ambry import APP_PACKAGES  # noqa: E402

STEP_TIMEOUT_S = 300
APP_DIR = "ambry/_app"
# Another distribution that installs top-level packages of the same names.
OTHER = "othercore"
# A module left in build/lib by an earlier build; the wheel must not ship it.
STALE = f"{APP_DIR}/core/_deleted_since_the_last_build.py"


class CheckFailed(Exception):
    """A step of the check failed; the message says which and why."""


def run(cmd: list[str], *, cwd: Path | None = None, **kw: Any) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, timeout=STEP_TIMEOUT_S, check=False, **kw
    )
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        raise CheckFailed(f"`{' '.join(cmd)}` exited {proc.returncode}:\n{tail}")
    return proc


def expected_files() -> tuple[set[str], set[str], set[str]]:
    """Relative to ROOT: the launcher's modules, the modules of core/ and desktop/, and
    every file of resources/."""
    launcher = {p.relative_to(ROOT).as_posix() for p in (ROOT / "ambry").glob("*.py")}
    modules: set[str] = set()
    for top in ("core", "desktop"):
        for path in (ROOT / top).rglob("*.py"):
            if "__pycache__" not in path.parts:
                modules.add(path.relative_to(ROOT).as_posix())
    data = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "resources").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }
    return launcher, modules, data


def build(out: Path) -> tuple[Path, Path, float]:
    """The sdist, then the wheel built from it; refuses setuptools' discovery warnings.

    The wheel is built in the unpacked sdist over a ``build/lib`` such as an earlier
    ``pip install .`` of a checkout leaves, holding a module deleted since then
    (:data:`STALE`): :func:`check_contents` fails if it reaches the wheel.
    """
    start = time.perf_counter()
    build = [sys.executable, "-m", "build", "--outdir", str(out)]
    procs = [run([*build, "--sdist", str(ROOT)])]
    [sdist] = out.glob("ambry-*.tar.gz")
    with tarfile.open(sdist) as tf:
        tf.extractall(out / "sdist", filter="data")
    tree = out / "sdist" / sdist.name.removesuffix(".tar.gz")
    stale = tree / "build" / "lib" / STALE
    stale.parent.mkdir(parents=True)
    stale.write_text('"""Deleted from the source since the last build."""\n')
    procs.append(run([*build, "--wheel", str(tree)]))
    seconds = time.perf_counter() - start
    log = "".join(proc.stdout + proc.stderr for proc in procs)
    for warning in ("would be ignored", "SetuptoolsDeprecationWarning", "is absent from the"):
        if warning in log:
            lines = [line for line in log.splitlines() if warning in line]
            raise CheckFailed(
                f"setuptools warned '{warning}': {lines[:3]}; declare the folder under "
                "[tool.setuptools] in pyproject.toml"
            )
    [wheel] = out.glob("ambry-*.whl")
    return sdist, wheel, seconds


def check_contents(sdist: Path, wheel: Path) -> str:
    launcher, modules, data = expected_files()
    with zipfile.ZipFile(wheel) as zf:
        in_wheel = set(zf.namelist())
    with tarfile.open(sdist) as tf:
        prefix = sdist.name.removesuffix(".tar.gz") + "/"
        in_sdist = {n.removeprefix(prefix) for n in tf.getnames()}
    app = {f"{APP_DIR}/{name}" for name in modules | data}
    problems = []
    for name, have, wanted in (
        ("wheel", in_wheel, launcher | app),
        ("sdist", in_sdist, launcher | modules | data | {"LICENSE", "README.md", "setup.py"}),
    ):
        missing = sorted(wanted - have)
        if missing:
            problems.append(f"the {name} lacks {len(missing)} files: {missing[:8]}")
    if STALE in in_wheel:
        problems.append(f"the wheel ships {STALE}, left in build/lib by an earlier build")
    if not any(n.endswith(".dist-info/licenses/LICENSE") for n in in_wheel):
        problems.append("the wheel lacks LICENSE (project.license-files in pyproject.toml)")
    if problems:
        raise CheckFailed("; ".join(problems))
    return (
        f"{len(modules)} modules and {len(data)} resource files in both "
        f"(in {APP_DIR}/ in the wheel), and the launcher; nothing stale from build/lib"
    )


def make_venv(venv: Path, wheel: Path, *, full: bool) -> float:
    """A new venv with the wheel installed (not editable); returns the install seconds."""
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check"]
    start = time.perf_counter()
    if full:
        run([*pip, "install", "--quiet", str(wheel)])
    else:
        run([*pip, "install", "--quiet", "--no-deps", str(wheel)])
        site = run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
        dev_site = sysconfig.get_path("purelib")
        (Path(site.stdout.strip()) / "_ambry_dev_deps.pth").write_text(dev_site + "\n")
    seconds = time.perf_counter() - start
    run([*pip, "check"])
    return seconds


def site_packages(venv: Path) -> Path:
    probe = "import sysconfig; print(sysconfig.get_path('purelib'))"
    return Path(run([str(venv / "bin" / "python"), "-c", probe]).stdout.strip())


def check_layout(venv: Path, work: Path) -> str:
    """Ambry adds ``ambry`` and its dist-info to site-packages and nothing else."""
    site = site_packages(venv)
    [dist_info] = site.glob("ambry-*.dist-info")
    record = (dist_info / "RECORD").read_text(encoding="utf-8").splitlines()
    tops = {Path(line.rsplit(",", 2)[0]).parts[0] for line in record if line}
    # Console scripts are recorded relative to site-packages (../../../bin/ambry).
    stray = sorted(tops - {"ambry", dist_info.name, ".."})
    if stray:
        raise CheckFailed(
            f"the wheel installs more than ambry at the top of site-packages: {stray}"
        )
    present = sorted(p.name for p in site.iterdir() if p.name.removesuffix(".py") in APP_PACKAGES)
    if present:
        raise CheckFailed(f"site-packages holds {present}")
    probe = (
        "import importlib.util, json; "
        f"print(json.dumps([importlib.util.find_spec(n) is None for n in {APP_PACKAGES!r}]))"
    )
    hidden = json.loads(run([str(venv / "bin" / "python"), "-c", probe], cwd=work).stdout)
    if not all(hidden):
        raise CheckFailed(f"one of {APP_PACKAGES} imports without the launcher: {hidden}")
    return (
        f"ambry and {dist_info.name} only at the top of site-packages; "
        "core, desktop and resources do not import there"
    )


def check_imports(venv: Path, work: Path) -> str:
    probe = (
        "import ambry, json; ambry.use_app_dir(); "
        "import core, desktop, resources, core.cli.commands, desktop.shell.app; "
        "print(json.dumps([m.__file__ for m in (ambry, core, desktop, resources)]))"
    )
    files = json.loads(run([str(venv / "bin" / "python"), "-c", probe], cwd=work).stdout)
    app = (site_packages(venv) / APP_DIR).resolve()
    outside = [f for f in files[1:] if not Path(f).resolve().is_relative_to(app)]
    if outside or not Path(files[0]).resolve().is_relative_to(venv.resolve()):
        raise CheckFailed(f"imported from outside {app}: {outside or files[:1]}")
    return f"the launcher loads core, desktop and resources from {APP_DIR} in the venv"


def check_self_test(ambry: Path, work: Path, env: dict[str, str]) -> str:
    out = run([str(ambry), "--self-test"], cwd=work, env=env).stdout
    passed = sum(line.startswith("PASS") for line in out.splitlines())
    return f"{passed} checks passed"


def _rpc(proc: subprocess.Popen[str], request: dict[str, Any]) -> dict[str, Any]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(request) + "\n")
    proc.stdin.flush()
    if "id" not in request:
        return {}
    line = proc.stdout.readline()
    if not line:
        raise CheckFailed(f"`ambry mcp` closed stdout before answering {request['method']}")
    reply: dict[str, Any] = json.loads(line)
    if "error" in reply:
        raise CheckFailed(f"`ambry mcp` refused {request['method']}: {reply['error']}")
    return reply["result"]  # type: ignore[no-any-return]


def setup_entry(ambry: Path, data: Path, work: Path, env: dict[str, str]) -> list[str]:
    """The command line ``ambry setup`` writes into an MCP client's config."""
    printed = run(
        [str(ambry), "--data-dir", str(data), "setup", "claude-code", "--print", "--json"],
        cwd=work,
        env=env,
    ).stdout
    entry = json.loads(printed)["entry"]
    if entry["command"] != str(ambry):
        raise CheckFailed(f"`ambry setup` names {entry['command']}, not {ambry}")
    return [entry["command"], *entry["args"]]


def check_mcp(ambry: Path, work: Path, env: dict[str, str]) -> str:
    data = Path(tempfile.mkdtemp(prefix="mcp-data-", dir=work))
    proc = subprocess.Popen(
        setup_entry(ambry, data, work, env),
        cwd=work,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        init = _rpc(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "install-check", "version": "1"},
                },
            },
        )
        _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = [
            t["name"]
            for t in _rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})["tools"]
        ]
        for needed in ("memory_store", "memory_search"):
            if needed not in tools:
                raise CheckFailed(f"tools/list lacks {needed}: {tools}")
        call = {"jsonrpc": "2.0", "method": "tools/call"}
        store = {
            "name": "memory_store",
            "arguments": {"type": "fact", "content": "Wheel installs work"},
        }
        _rpc(proc, {**call, "id": 3, "params": store})
        search = {"name": "memory_search", "arguments": {"query": "wheel installs"}}
        found = _rpc(proc, {**call, "id": 4, "params": search})
        if "Wheel installs work" not in json.dumps(found):
            raise CheckFailed(f"memory_search did not find the stored entry: {found}")
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    server = init["serverInfo"]
    return (
        f"the entry of `ambry setup` starts {server['name']} {server['version']}, "
        f"{len(tools)} tools, store and search by MCP"
    )


def check_cli(ambry: Path, work: Path, env: dict[str, str]) -> str:
    data = tempfile.mkdtemp(prefix="cli-data-", dir=work)
    common = ["--data-dir", data]
    run(
        [str(ambry), *common, "--create", "store", "--type", "fact", "Dogs are named Luna"],
        cwd=work,
        env=env,
    )
    hits = json.loads(
        run([str(ambry), *common, "search", "luna", "--json"], cwd=work, env=env).stdout
    )["results"]
    if not hits or hits[0]["content"] != "Dogs are named Luna":
        raise CheckFailed(f"`ambry search luna` did not find the stored entry: {hits}")
    return "ambry store, then ambry search finds it"


def python_client_example() -> str:
    """The code block of "The Python client" in docs/protocol.md, as a person copies it."""
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    section = text.partition("## The Python client")[2]
    block = section.partition("```python\n")[2].partition("```")[0]
    if "AmbryClient" not in block:
        raise CheckFailed("docs/protocol.md has no Python client example under its heading")
    return block


def check_client(venv: Path, ambry: Path, work: Path, env: dict[str, str]) -> str:
    """The documented client example and ``examples/agent.py``, copied out of the
    source tree and run with the venv's Python against the venv's ``ambry serve``."""
    folder = Path(tempfile.mkdtemp(prefix="client-", dir=work))
    (folder / "data").mkdir()
    sock = folder / "agent.sock"
    served = {**env, "AMBRY_DATA_DIR": str(folder / "data"), "AMBRY_SOCKET": str(sock)}
    example, agent = folder / "client_example.py", folder / "agent.py"
    example.write_text(python_client_example(), encoding="utf-8")
    agent.write_bytes((ROOT / "examples" / "agent.py").read_bytes())
    python = str(venv / "bin" / "python")
    with (folder / "serve.log").open("wb") as log:
        server = subprocess.Popen([str(ambry), "serve"], cwd=work, env=served, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while not sock.exists():
            if server.poll() is not None or time.monotonic() > deadline:
                tail = (folder / "serve.log").read_text(errors="replace")[-2000:]
                raise CheckFailed(f"`ambry serve` did not start (exit {server.poll()}):\n{tail}")
            time.sleep(0.05)
        out = run([python, str(example)], cwd=folder, env=served).stdout
        if "Prefers metric units" not in out:
            raise CheckFailed(f"the client example of docs/protocol.md printed {out!r}")
        said = run(
            [python, str(agent), "I prefer answers in bullet points"], cwd=folder, env=served
        )
        if "You said: I prefer answers in bullet points" not in said.stdout:
            raise CheckFailed(f"examples/agent.py printed {said.stdout!r}")
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    return "the Python client example of docs/protocol.md and examples/agent.py, by ambry serve"


def check_relaunch(venv: Path, ambry: Path, work: Path, env: dict[str, str]) -> str:
    """``python -m ambry``, and ``ambry doctor``, which times ``python -m ambry mcp``."""
    version = run([str(venv / "bin" / "python"), "-m", "ambry", "--version"], cwd=work, env=env)
    if not version.stdout.startswith("ambry "):
        raise CheckFailed(f"`python -m ambry --version` printed {version.stdout!r}")
    # Other checks of the doctor (keyring, Qt libraries) may fail here; only MCP counts.
    doctor = subprocess.run(
        [str(ambry), "doctor", "--json"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT_S,
        check=False,
    )
    try:
        [mcp] = [f for f in json.loads(doctor.stdout) if f["check"] == "mcp"]
    except (ValueError, KeyError, TypeError) as exc:
        raise CheckFailed(f"`ambry doctor --json` gave no MCP finding: {doctor.stderr}") from exc
    if mcp["status"] == "fail":
        raise CheckFailed(f"`ambry doctor` could not start `python -m ambry mcp`: {mcp}")
    return f"python -m ambry; ambry doctor: {mcp['detail']}"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_other(out: Path) -> Path:
    """A wheel of another distribution with top-level ``core`` and ``resources`` packages.

    Its ``.pth`` file imports its ``core`` whenever Python starts, so Ambry's
    launcher finds that module already imported: the hardest case for it.
    """
    info = f"{OTHER}-1.0.dist-info"
    files = {
        "core/__init__.py": f'"""Not Ambry\'s."""\n\nOWNER = "{OTHER}"\n',
        "resources/__init__.py": f'OWNER = "{OTHER}"\n',
        f"{OTHER}.pth": "import core\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {OTHER}\nVersion: 1.0\n",
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: install_check\nRoot-Is-Purelib: true\n"
            "Tag: py3-none-any\n"
        ),
    }
    record = [_record_line(name, text.encode()) for name, text in files.items()]
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{OTHER}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return wheel


def install_other(venv: Path, out: Path, work: Path) -> str:
    """Install :func:`build_other` beside Ambry; ``import core`` must then give its module."""
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check"]
    run([*pip, "install", "--quiet", "--no-deps", str(build_other(out))])
    run([*pip, "check"])
    probe = (
        "import core, json, resources; "
        "print(json.dumps([core.__file__, getattr(core, 'OWNER', ''), resources.OWNER]))"
    )
    where, *owners = json.loads(run([str(python), "-c", probe], cwd=work).stdout)
    if owners != [OTHER, OTHER]:
        raise CheckFailed(f"`import core` in the venv gave {where}, not {OTHER}'s")
    shown = Path(where).resolve().relative_to(venv.resolve()).parent
    return f"{OTHER} installed beside ambry; `import core` gives its {shown}, not Ambry's"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--full", action="store_true", help="install the dependencies too")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--keep", metavar="DIR", help="work in DIR and leave it (default: a temp dir)"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ambry-install-") as tmp:
        base = Path(args.keep).absolute() if args.keep else Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        try:
            figures = check(base, full=args.full, quiet=args.json)
        except CheckFailed as exc:
            print(f"FAIL  install check: {exc}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(figures, indent=2))
    return 0


def check(base: Path, *, full: bool, quiet: bool) -> dict[str, Any]:
    """Every step in order; the figures of the run."""
    work = base / "work"
    work.mkdir()
    # A data dir AMBRY_DATA_DIR names must exist, as one a person set up does.
    (work / "default-data").mkdir()
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
        "AMBRY_DATA_DIR": str(work / "default-data"),
        "XDG_RUNTIME_DIR": str(work / "runtime"),
        "AMBRY_LOG_DIR": str(work / "logs"),
    }
    env.pop("PYTHONPATH", None)

    def say(step: str, detail: str) -> None:
        if not quiet:
            print(f"ok    {step}: {detail}", flush=True)

    sdist, wheel, build_s = build(base / "dist")
    say("build", f"{sdist.name} and {wheel.name} in {build_s:.1f} s")
    say("contents", check_contents(sdist, wheel))
    venv = base / "venv"
    install_s = make_venv(venv, wheel, full=full)
    say(
        "install",
        f"{'with' if full else 'without'} dependencies in {install_s:.1f} s, pip check ok",
    )
    ambry = venv / "bin" / "ambry"
    say("layout", check_layout(venv, work))

    def use(label: str) -> None:
        say(f"imports{label}", check_imports(venv, work))
        say(f"self-test{label}", check_self_test(ambry, work, env))
        say(f"mcp{label}", check_mcp(ambry, work, env))
        say(f"cli{label}", check_cli(ambry, work, env))
        say(f"client{label}", check_client(venv, ambry, work, env))
        say(f"relaunch{label}", check_relaunch(venv, ambry, work, env))

    use("")
    say("other core", install_other(venv, base / "other", work))
    use(f" beside {OTHER}")
    return {
        "benchmark": "install",
        "mode": "full" if full else "no-deps",
        "build_s": round(build_s, 2),
        "install_s": round(install_s, 2),
        "wheel_bytes": wheel.stat().st_size,
        "sdist_bytes": sdist.stat().st_size,
        "venv_bytes": sum(p.stat().st_size for p in venv.rglob("*") if p.is_file()),
    }


if __name__ == "__main__":
    sys.exit(main())
