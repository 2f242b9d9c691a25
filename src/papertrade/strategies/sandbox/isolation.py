"""How a strategy's process is shut off from the machine, and whether this machine can do it.

The process is started through util-linux's `unshare` and `setpriv` (part of every Linux
distribution's base system):

- new PID, network, IPC, UTS, mount and cgroup namespaces: the process is PID 1 of its own
  namespace with a /proc of its own, sees no other process of the machine and has no network
  but a loopback that is down;
- a user id of its own: run as root, the service gives each run a fresh unprivileged uid
  (setpriv, no groups, no capabilities, no new privileges); run as another user, the process
  gets a user namespace that maps that one user and nothing else;
- it dies with its launcher (`--kill-child`, a parent-death signal), and the launcher with the
  server's thread that started it.

Inside, child.py adds the resource limits, its niceness and the allow-list seccomp filter. The
first run in a process checks all of it (`status`): a machine that cannot provide a layer
(no `unshare`, no user namespaces for a non-root service, a Python the fresh uid cannot read)
refuses Python strategies with the reason instead of running them with less isolation.
"""

import json
import logging
import os
import secrets
import shutil
import subprocess
import sys
import threading
import time
from typing import Any

from papertrade.strategies.sandbox import protocol

log = logging.getLogger("papertrade.strategies.sandbox")

UID_BASE = 1_500_000_000  # fresh uids are drawn above this, far from any account's
UID_SPAN = 100_000_000
NAMESPACES = ("--pid", "--fork", "--kill-child", "--mount-proc", "--net", "--ipc", "--uts")
PROBE_TIMEOUT_S = 20.0
RECHECK_S = 60.0  # a refusal is checked again after this long (a probe may time out under load)
_status: str | None = None  # "" once checked and sound, else why not
_checked_at = 0.0
_status_lock = threading.Lock()


def command() -> list[str]:
    """The argv that starts child.py isolated (fresh uid per call when run as root)."""
    python = [sys.executable, "-I", "-m", "papertrade.strategies.sandbox.child"]
    died = ["setpriv", "--pdeathsig", "KILL", "--"]  # the launcher dies with its starter
    if os.geteuid() == 0:
        uid = str(UID_BASE + secrets.randbelow(UID_SPAN))
        identity = [
            "setpriv", "--reuid", uid, "--regid", uid, "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs", "--pdeathsig", "KILL", "--",
        ]  # fmt: skip
        return [*died, "unshare", *NAMESPACES, "--cgroup", "--", *identity, *python]
    user = ["--user", f"--map-user={os.geteuid()}", f"--map-group={os.getegid()}"]
    inside = ["setpriv", "--no-new-privs", "--pdeathsig", "KILL", "--"]
    return [*died, "unshare", *user, *NAMESPACES, "--cgroup", "--", *inside, *python]


def status() -> str:
    """'' when every layer holds on this machine, else the reason Python strategies are
    refused. Checked once per process (a run of about a tenth of a second) and remembered; a
    refusal is checked again a minute later."""
    global _status, _checked_at
    with _status_lock:
        stale = bool(_status) and time.monotonic() - _checked_at > RECHECK_S
        if _status is None or stale:
            was, _status, _checked_at = _status, _check(), time.monotonic()
            if _status and _status != was:
                log.warning("Python strategies are refused on this machine: %s", _status)
        return _status


def _check() -> str:
    for tool in ("unshare", "setpriv"):
        if shutil.which(tool) is None:
            return f"util-linux's `{tool}` is not installed"
    request = json.dumps({"probe": True}).encode()
    try:
        done = subprocess.run(
            command(),
            input=protocol.LENGTH.pack(len(request)) + request,
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            env={},
            close_fds=True,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the isolated process could not be started ({exc})"
    facts = _answer(done.stdout)
    if facts is None:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return "the isolated process could not be started" + (f": {said[-1]}" if said else "")
    return _judge(facts)


def _answer(output: bytes) -> dict[str, Any] | None:
    head = 1 + protocol.LENGTH.size
    if len(output) < head or output[:1] != protocol.RESULT:
        return None
    try:
        facts: dict[str, Any] = json.loads(output[head:])
    except ValueError:
        return None
    return facts if facts.get("ok") else None


def _judge(facts: dict[str, Any]) -> str:
    if facts.get("pid") != 1:
        return "the process is not alone in a PID namespace"
    if int(str(facts.get("capabilities", "1")), 16) != 0:
        return "the process kept capabilities"
    uid_map = facts.get("uid_map") or []
    own_namespace = len(uid_map) == 3 and uid_map[2] == "1"
    if os.geteuid() == 0 and facts.get("uid", 0) < UID_BASE:
        return "the process did not get a user id of its own"
    if os.geteuid() != 0 and not own_namespace:
        return "the process did not get a user namespace of its own"
    if not facts.get("filtered"):
        return "the seccomp filter did not refuse a syscall outside its list"
    return ""
