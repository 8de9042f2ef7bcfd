"""Where compilations are kept: in memory for this process, and on disk private to this user.

    key = cache.key(source, options, names, arch, want_cubin, compiler="NVRTC 13.0")
    hit = cache.get(key)           # a Compiled, or None
    cache.put(key, compiled)
    cache.put_failure(key, filename, log);  cache.get_failure(key, filename)   # NVRTC's refusal: its log

The key is a hash of everything that can change the output, the compiler's version included (read
from the library that compiles, never from CuPy). The disk copy lives in ``COURSE_LIB_CACHE``
(default ``~/.cache/course_lib``), created 0700 and written through temporary files renamed into
place; an entry whose hashes do not match its PTX or CUBIN, or that is not ours, is ignored and
deleted, because a planted CUBIN would run on the GPU as this user's code; a damaged one is rebuilt
and says so in one line on stderr (``damaged``). A refusal is kept as ``KEY.failed`` (the log, hashed,
and the file name it names, which the key holds only in part). Temporary files that a killed write
left behind (``*.tmp<pid>`` of a process that is gone) are deleted once per process (``clean_stale``).
A cache that cannot be used (``COURSE_LIB_CACHE`` naming a file, a folder that cannot be made or
written, someone else's) costs speed, and says so once per process, in one line with the fix
(``unusable``): every compilation is then made again on every run.

This module stores and fetches; it does not compile (``nvrtc.py``).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path

CACHE_DIR = Path(os.environ.get("COURSE_LIB_CACHE", Path.home() / ".cache" / "course_lib"))

memory: dict = {}          # key -> Compiled
failures: dict = {}        # key -> (file name, NVRTC's log) of a source it refused
said: set = set()          # (folder, why) a cache that cannot be used was said of (once per process)
cleaned: set = set()       # folders whose temporary files of killed writes are gone (once per process)
STALE_S = 3600             # a temporary file this old is left over whatever its pid says (pids come back)


def key(source, options, names, arch, want_cubin, compiler: str) -> str:
    blob = json.dumps([source, list(options), list(names), arch, want_cubin, compiler])
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def get(k: str, compiled_type):
    """The cached compilation for `k` (memory, then disk), or None."""
    if k in memory:
        return memory[k]
    hit = _disk_load(k, compiled_type)
    if hit is not None:
        memory[k] = hit
    return hit


def put(k: str, c) -> None:
    memory[k] = c
    _disk_store(k, c)


def get_failure(k: str, filename: str) -> str | None:
    """NVRTC's log for the source of key `k` it refused, compiled as `filename`; None if not kept."""
    if k not in failures:
        kept = _failure_load(k)
        if kept is None:
            return None
        failures[k] = kept
    named, log = failures[k]
    return log if named == filename else None


def put_failure(k: str, filename: str, log: str) -> None:
    failures[k] = (filename, log)
    folder = private_dir()
    if folder is None:
        return
    try:
        write_private(folder / f"{k}.failed", json.dumps(dict(filename=filename, log=log,
                                                              log_sha256=_sha(log.encode()))).encode())
    except OSError:
        pass


def _failure_load(k):
    folder = private_dir()
    if folder is None:
        return None
    path = folder / f"{k}.failed"
    try:
        d = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        damaged(path, f"not JSON: {type(exc).__name__}")
        return _discard(path)
    if not (isinstance(d, dict) and isinstance(d.get("filename"), str) and isinstance(d.get("log"), str)
            and d.get("log_sha256") == _sha(d["log"].encode())):
        damaged(path, "a field or the log's hash does not match")
        return _discard(path)
    return d["filename"], d["log"]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def private_dir() -> Path | None:
    """CACHE_DIR, created private to this user (0700); None (memory cache only, said once: ``unusable``)
    when it cannot be made or written, or belongs to someone else: a CUBIN planted there would run on the
    GPU as ours."""
    try:
        CACHE_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
    except FileExistsError:
        return unusable("is a file, not a folder")
    except OSError as exc:
        return unusable(f"cannot be made ({exc.strerror or exc})")
    try:
        if hasattr(os, "getuid"):
            st = CACHE_DIR.stat()
            if st.st_uid != os.getuid():
                return unusable("belongs to another user, and what it holds would run as yours, so it is not read")
            if st.st_mode & 0o077:       # made by an older course_lib, or with a lax umask
                os.chmod(CACHE_DIR, 0o700)
        if not _writable(CACHE_DIR):
            return unusable("is not writable")
        for folder in (CACHE_DIR, CACHE_DIR / "sass"):       # compilations, and disassemblies (sass.py)
            clean_stale(folder)
        return CACHE_DIR
    except OSError as exc:
        return unusable(f"cannot be used ({exc.strerror or exc})")


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK)


def unusable(why: str) -> None:
    """Say once per process, in one line with the fix, why compilations are not kept on disk."""
    if (CACHE_DIR, why) not in said:
        said.add((CACHE_DIR, why))
        fix = "set COURSE_LIB_CACHE to a folder of your own that you can write"
        if os.environ.get("COURSE_LIB_CACHE"):
            fix += ", or unset it (the default is ~/.cache/course_lib)"
        print(f"course_lib: the compile cache {CACHE_DIR} {why}: compilations are not kept between runs "
              f"(each is made again, slower); {fix}", file=sys.stderr, flush=True)
    return None


def write_private(path: Path, data: bytes) -> None:
    """Write through a temporary file created 0600, then rename: readers never see half a file."""
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    tmp.replace(path)


def damaged(path: Path, why: str) -> None:
    """The one line that says a cache entry was bad and is being rebuilt (not a student's problem,
    but a rebuilt entry costs a compilation, and a cache that keeps breaking is worth knowing of)."""
    print(f"course_lib: cache entry {path} was damaged ({why}); rebuilt it", file=sys.stderr, flush=True)


_TMP = re.compile(r"\.tmp(\d+)$")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)                  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except (OSError, OverflowError, ValueError):     # not ours to signal (alive), or Windows' answer
        return sys.platform != "win32"
    return True


def clean_stale(folder: Path) -> None:
    """Delete ``*.tmp<pid>`` files in `folder` whose writer is gone (killed mid-write) or that are
    over an hour old; once per folder and process."""
    if folder in cleaned:
        return
    cleaned.add(folder)
    try:
        for p in folder.iterdir():
            m = _TMP.search(p.name)
            if m and p.is_file() and (not _alive(int(m[1])) or time.time() - p.stat().st_mtime > STALE_S):
                _discard(p)
    except OSError:
        pass


def _disk_load(k, compiled_type):
    """The entry for `k`, or None if there is none or it cannot be trusted: not a JSON object, a
    field missing or of the wrong type, or PTX/CUBIN whose hash differs from the one stored with it
    (a truncated write, a disk error, an edit). A bad entry is deleted, so the caller recompiles and
    stores a good one instead of failing on it every time."""
    folder = private_dir()
    if folder is None:
        return None
    meta, blob = folder / f"{k}.json", folder / f"{k}.cubin"
    try:
        d = json.loads(meta.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        damaged(meta, f"not JSON: {type(exc).__name__}")
        return _discard(meta, blob)
    try:
        cubin = blob.read_bytes() if isinstance(d, dict) and d.get("has_cubin") is True else None
    except OSError:
        cubin = b""                                   # announced but unreadable: fails the hash below
    if not _trusted(d, None):
        damaged(meta, "a field or the PTX's hash does not match")
        return _discard(meta, blob)
    if not _trusted(d, cubin):                        # the listing is sound: the machine code is what broke
        damaged(blob, "its hash does not match the one its listing holds")
        return _discard(meta, blob)
    return compiled_type(ptx=d["ptx"], cubin=cubin, lowered_names=d["lowered_names"], log=d["log"],
                         arch=d["arch"], entries=d["entries"], machine=d.get("machine", ""))


def _trusted(d, cubin) -> bool:
    if not isinstance(d, dict):
        return False
    shapes = dict(ptx=str, lowered_names=dict, log=str, arch=int, entries=list, has_cubin=bool, ptx_sha256=str)
    if any(not isinstance(d.get(k), t) for k, t in shapes.items()):
        return False
    if not isinstance(d.get("machine", ""), str):
        return False
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in d["lowered_names"].items()):
        return False
    if not all(isinstance(e, str) for e in d["entries"]) or _sha(d["ptx"].encode()) != d["ptx_sha256"]:
        return False
    return cubin is None or _sha(cubin) == d.get("cubin_sha256")


def _discard(*paths):
    for p in paths:
        try:
            p.unlink()
        except OSError:
            pass
    return None


def _disk_store(k, c) -> None:
    """The CUBIN first, then the JSON with both hashes, so a reader never sees half an entry."""
    folder = private_dir()
    if folder is None:
        return
    try:
        d = dict(ptx=c.ptx, lowered_names=c.lowered_names, log=c.log, arch=c.arch, entries=c.entries,
                 machine=c.machine, has_cubin=c.cubin is not None, ptx_sha256=_sha(c.ptx.encode()))
        if c.cubin is not None:
            d["cubin_sha256"] = _sha(c.cubin)
            write_private(folder / f"{k}.cubin", c.cubin)
        write_private(folder / f"{k}.json", json.dumps(d).encode())
    except OSError:
        pass
