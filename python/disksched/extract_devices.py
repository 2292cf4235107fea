"""Devices for `disksched extract`: the other side of the extractor's interface.

`open_device("sim:atlas10k?jitter_us=20")`, `open_device("/dev/sdb")`,
`open_device("nbd+unix:///?socket=/tmp/s")`. Only this module knows what is
behind a device; the extractor (`disksched.extract`) sees `Device` only.
"""

from __future__ import annotations

import errno
import os
import random
import socket
import stat
import struct
import time
from pathlib import Path
from typing import Optional
from urllib.parse import parse_qs, urlparse

from .extract.device import Device, DeviceError


class SimDevice(Device):
    """A simulated drive in virtual time (the step API): exact, or with host
    timing noise `jitter_us` (each completion is learned late by a random
    delay: 95% exponential with mean `jitter_us`, 5% a tail with mean
    10 x `jitter_us`, as a real host's interrupt and scheduling latency).
    `queue` commands at most are at the drive at once (the host holds the
    rest, in order), and the drive serves those it holds in the order of its
    command-queue scheduler `order` (fcfs, sptf, ...): the drive's queue."""

    virtual = True
    queued = True

    def __init__(self, disk: str, jitter_us: float = 0.0, seed: int = 1, queue: int = 1, order: str = "fcfs"):
        super().__init__()
        import json

        from . import DiskschedError, _core
        from .simulation import Simulation

        cfg = {"disk": {"model": disk, "scheduler": order}, "host": {"scheduler": "fcfs", "queue_threshold": int(queue)},
               "workload": {"kind": "dd", "request_kb": 4}, "run": {"requests": 1, "warmup_requests": 0}}
        try:
            self._sim = Simulation(cfg, workload=False, seed=seed)
            info = json.loads(_core.disk_show(disk)[1])
        except DiskschedError as e:
            raise DeviceError(f"sim:{disk}: {e}") from None
        self.blocks = int(info["capacity_blocks"])
        self.block_bytes = int(info.get("sector_bytes", 512))
        self.jitter_ns = float(jitter_us) * 1000.0
        self._rng = random.Random(seed * 7919 + 17)
        self._now = 0
        opts = [f"jitter_us={jitter_us:g}"] * bool(jitter_us) + [f"queue={queue}"] * (queue != 1) + [f"order={order}"] * (order != "fcfs")
        self.label = f"sim:{disk}" + ("?" + "&".join(opts) if opts else "")
        self._submitted = 0

    def now_ns(self) -> int:
        return self._now

    def _noise(self) -> int:
        if self.jitter_ns <= 0:
            return 0
        mean = self.jitter_ns * (10.0 if self._rng.random() < 0.05 else 1.0)
        return int(self._rng.expovariate(1.0 / mean))

    def _io(self, lbn: int, blocks: int, write: bool) -> int:
        return self._run([(lbn, blocks, write)])[0]

    def _io_batch(self, cmds: list) -> list:
        return self._run([(lbn, blocks, False) for lbn, blocks in cmds])

    def _run(self, cmds: list) -> list:
        """Submit `cmds` now, step until every one has completed; each one's
        completion as the host learns it (its own noise: completions learned
        in the order they happened, none before the one before it)."""
        sim = self._sim
        if sim.now_ns < self._now:
            sim.run(until_ms=self._now / 1e6)
        first = self._submitted
        for lbn, blocks, write in cmds:
            sim.submit(lbn, blocks, write=write)
        self._submitted += len(cmds)
        out: list = [None] * len(cmds)
        left = len(cmds)
        while left:
            t = sim.step()
            for c in sorted(sim.completions(), key=lambda c: c["done_ns"]):
                self._now = max(self._now, c["done_ns"] + self._noise())
                out[c["seq"] - first] = self._now
                left -= 1
            if left and t is None:
                raise DeviceError(f"{self.label}: the request at {cmds[0][0]} never completed")
        return out

    def idle_until(self, t_ns: int) -> None:
        self._now = max(self._now, int(t_ns))


def _mounted(path: str) -> Optional[str]:
    """The mount point if `path` (or a partition of it) is mounted."""
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except OSError:
        return None
    try:
        with open("/proc/self/mounts") as f:
            for line in f:
                dev, mnt = line.split()[:2]
                if not dev.startswith("/"):
                    continue
                r = os.path.realpath(dev)
                if r == real or (stat.S_ISBLK(st.st_mode) and r.startswith(real)):
                    return mnt.replace("\\040", " ")
    except OSError:
        return None
    return None


class WallClockDevice(Device):
    """A real device: its clock is the host's monotonic one, and idle time is slept."""

    def idle_until(self, t_ns: int) -> None:
        d = t_ns - time.monotonic_ns()
        if d > 0:
            time.sleep(d / 1e9)


class FileDevice(WallClockDevice):
    """A block device or a file, opened with O_DIRECT (Linux), timed with the
    host's monotonic clock. Reads by default; writes only inside the range
    `allow_writes` names, and never on a mounted device. One command at a
    time (`queued` is False): a batch of reads runs one after another, so
    the drive's queue is not measured through it."""

    def __init__(self, path: str, block_bytes: int = 512, want_writes: bool = False):
        super().__init__()
        self.path = path
        if not os.path.exists(path):
            raise DeviceError(f"{path}: no such device or file")
        st = os.stat(path)
        if not (stat.S_ISBLK(st.st_mode) or stat.S_ISREG(st.st_mode)):
            raise DeviceError(f"{path}: not a block device or a regular file")
        if want_writes and stat.S_ISBLK(st.st_mode):
            m = _mounted(path)
            if m:
                raise DeviceError(f"{path}: mounted on {m}; refusing to write to a mounted device")
        flags = (os.O_RDWR if want_writes else os.O_RDONLY) | getattr(os, "O_DIRECT", 0)
        try:
            self.fd = os.open(path, flags)
        except OSError as e:
            if e.errno == errno.EINVAL and getattr(os, "O_DIRECT", 0):
                raise DeviceError(f"{path}: O_DIRECT not supported by its file system") from None
            raise DeviceError(f"{path}: cannot open: {e.strerror}") from None
        size = os.lseek(self.fd, 0, os.SEEK_END)
        self.block_bytes = block_bytes
        self.blocks = size // block_bytes
        if self.blocks < 1:
            os.close(self.fd)
            raise DeviceError(f"{path}: empty (size {size} bytes)")
        import mmap

        self._buf = mmap.mmap(-1, 1 << 20)  # page-aligned, as O_DIRECT needs
        self.label = path

    def now_ns(self) -> int:
        return time.monotonic_ns()

    def _io(self, lbn: int, blocks: int, write: bool) -> int:
        n = blocks * self.block_bytes
        if n > len(self._buf):
            raise DeviceError(f"{self.path}: request of {blocks} blocks is over 1 MiB")
        view = memoryview(self._buf)[:n]
        try:
            if write:
                got = os.pwritev(self.fd, [view], lbn * self.block_bytes)
            else:
                got = os.preadv(self.fd, [view], lbn * self.block_bytes)
        except OSError as e:
            raise DeviceError(f"{self.path}: {'write' if write else 'read'} at block {lbn}: {e.strerror}") from None
        finally:
            view.release()
        if got != n:
            raise DeviceError(f"{self.path}: short {'write' if write else 'read'} at block {lbn} ({got} of {n} bytes)")
        return time.monotonic_ns()

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


class NbdDevice(WallClockDevice):
    """An NBD export (fixed-newstyle handshake, NBD_OPT_GO), e.g. `disksched
    serve`: nbd+unix:///?socket=PATH or nbd://HOST:PORT[/EXPORT]. Reads of a
    batch are all sent before the first reply is read (the server may
    complete them in any order)."""

    queued = True
    MAGIC = 0x4E42444D41474943
    IHAVEOPT = 0x49484156454F5054
    REPLY = 0x3E889045565A9

    def __init__(self, url: str):
        super().__init__()
        u = urlparse(url)
        export = u.path.lstrip("/")
        try:
            if u.scheme == "nbd+unix":
                q = parse_qs(u.query)
                if "socket" not in q:
                    raise DeviceError(f"{url}: nbd+unix needs ?socket=PATH")
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.settimeout(30)
                self.sock.connect(q["socket"][0])
            else:
                self.sock = socket.create_connection((u.hostname or "127.0.0.1", u.port or 10809), timeout=30)
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as e:
            raise DeviceError(f"{url}: cannot connect: {e.strerror or e}") from None
        self.label = url
        self._handle = 0
        self._handshake(url, export)

    def _recv(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            try:
                chunk = self.sock.recv(n - len(out))
            except OSError as e:
                raise DeviceError(f"{self.label}: {e.strerror or e}") from None
            if not chunk:
                raise DeviceError(f"{self.label}: connection closed by the server")
            out += chunk
        return out

    def _handshake(self, url: str, export: str) -> None:
        magic, opt, flags = struct.unpack(">QQH", self._recv(18))
        if magic != self.MAGIC or opt != self.IHAVEOPT:
            raise DeviceError(f"{url}: not a fixed-newstyle NBD server")
        self.sock.sendall(struct.pack(">I", 1 | (2 if flags & 2 else 0)))  # FIXED_NEWSTYLE, NO_ZEROES
        name = export.encode()
        data = struct.pack(">I", len(name)) + name + struct.pack(">H", 0)
        self.sock.sendall(struct.pack(">QII", self.IHAVEOPT, 7, len(data)) + data)  # NBD_OPT_GO
        size = None
        while True:
            magic, opt, rtype, length = struct.unpack(">QIII", self._recv(20))
            body = self._recv(length)
            if rtype == 1:  # NBD_REP_ACK
                break
            if rtype == 3 and length >= 12 and struct.unpack(">H", body[:2])[0] == 0:  # NBD_INFO_EXPORT
                size = struct.unpack(">Q", body[2:10])[0]
            elif rtype & 0x80000000:
                raise DeviceError(f"{url}: the server refused export '{export}': {body[4:].decode(errors='replace') or rtype}")
        if size is None:
            raise DeviceError(f"{url}: the server sent no export size")
        self.block_bytes = 512
        self.blocks = size // 512

    def now_ns(self) -> int:
        return time.monotonic_ns()

    def _io(self, lbn: int, blocks: int, write: bool) -> int:
        self._handle += 1
        n = blocks * self.block_bytes
        hdr = struct.pack(">IHHQQI", 0x25609513, 0, 1 if write else 0, self._handle, lbn * self.block_bytes, n)
        try:
            self.sock.sendall(hdr + (bytes(n) if write else b""))
        except OSError as e:
            raise DeviceError(f"{self.label}: {e.strerror or e}") from None
        magic, err, handle = struct.unpack(">IIQ", self._recv(16))
        t = time.monotonic_ns()
        if magic != 0x67446698 or handle != self._handle:
            raise DeviceError(f"{self.label}: bad reply from the server")
        if err:
            raise DeviceError(f"{self.label}: {'write' if write else 'read'} at block {lbn}: error {err}")
        if not write:
            self._recv(n)
        return t

    def _io_batch(self, cmds: list) -> list:
        """Every read's request sent before any reply is read (NBD replies
        carry the request's handle, in whatever order the server completes
        them); each reply's arrival time."""
        first = self._handle + 1
        reqs = b""
        for lbn, blocks in cmds:
            self._handle += 1
            reqs += struct.pack(">IHHQQI", 0x25609513, 0, 0, self._handle, lbn * self.block_bytes, blocks * self.block_bytes)
        try:
            self.sock.sendall(reqs)
        except OSError as e:
            raise DeviceError(f"{self.label}: {e.strerror or e}") from None
        out: list = [None] * len(cmds)
        for _ in cmds:
            magic, err, handle = struct.unpack(">IIQ", self._recv(16))
            t = time.monotonic_ns()
            i = handle - first
            if magic != 0x67446698 or not 0 <= i < len(cmds) or out[i] is not None:
                raise DeviceError(f"{self.label}: bad reply from the server")
            if err:
                raise DeviceError(f"{self.label}: read at block {cmds[i][0]}: error {err}")
            self._recv(cmds[i][1] * self.block_bytes)
            out[i] = t
        return out

    def close(self) -> None:
        try:
            self.sock.sendall(struct.pack(">IHHQQI", 0x25609513, 0, 2, 0, 0, 0))  # NBD_CMD_DISC
            self.sock.close()
        except OSError:
            pass


def open_device(text: str, *, want_writes: bool = False, seed: int = 1) -> Device:
    """A device from its command-line form (one-line DeviceError if it cannot be opened)."""
    if text.startswith("sim:"):
        rest = text[4:]
        name, _, query = rest.partition("?")
        if not name:
            raise DeviceError(f"{text}: expected sim:NAME or sim:SPEC.toml")
        jitter, queue, order = 0.0, 1, "fcfs"
        for k, v in parse_qs(query, keep_blank_values=True).items():
            if k == "order":
                order = v[-1]
                continue
            if k not in ("jitter_us", "queue"):
                raise DeviceError(f"{text}: unknown option '{k}' (sim: takes jitter_us, queue, order)")
            try:
                x = float(v[-1])
            except ValueError:
                raise DeviceError(f"{text}: {k} = {v[-1]!r} is not a number") from None
            if k == "jitter_us":
                if not 0 <= x <= 10000:
                    raise DeviceError(f"{text}: jitter_us = {x:g} outside [0, 10000]")
                jitter = x
            else:
                if x != int(x) or not 1 <= x <= 1024:
                    raise DeviceError(f"{text}: queue = {v[-1]} is not a whole number of commands in [1, 1024]")
                queue = int(x)
        return SimDevice(name, jitter, seed, queue, order)
    if text.startswith("nbd://") or text.startswith("nbd+unix://"):
        return NbdDevice(text)
    if "://" in text or (":" in text and not Path(text).exists() and not text.startswith("/")):
        raise DeviceError(f"{text}: unknown device (expected a block device or file, sim:NAME, "
                          "nbd://HOST:PORT or nbd+unix:///?socket=PATH)")
    return FileDevice(text, want_writes=want_writes)
