"""The device interface: all the extractor ever sees of a drive.

`read(lbn, blocks)` or `write(lbn, blocks)` is submitted at the device
clock's "now" and returns the clock time at which the host learned it
completed. `read_batch([(lbn, blocks), ...])` submits several reads at once
(in that order) and returns each one's completion time; a device that can
have only one command outstanding (`queued = False`) runs them one after
another, and says so. `idle_until(t)` lets time pass with nothing
outstanding. `busy_ns` counts the device time used (what
DIXtrac's "minutes" measure). Nothing else crosses this boundary: no geometry,
no drive model, no simulator handle. Implementations live outside this
package (`disksched.extract_devices`), so this package cannot reach the truth.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Optional, Tuple


class DeviceError(Exception):
    """A device that cannot be opened, read or written (one line, no traceback)."""


class OverBudget(Exception):
    """The device time `Device.limit_busy` allowed is used up (raised by the command that used it up)."""


class Device(ABC):
    #: capacity in blocks
    blocks: int = 0
    #: bytes per block
    block_bytes: int = 512
    #: a short description for reports
    label: str = ""
    #: True when the device's clock is virtual and exact enough for angles
    virtual: bool = False
    #: True when `read_batch` really has all its commands outstanding at once
    queued: bool = False

    def __init__(self) -> None:
        self.busy_ns = 0
        self.commands = 0
        self._write_range: Optional[Tuple[int, int]] = None
        self._busy_limit: Optional[int] = None

    def limit_busy(self, until_ns: Optional[int]) -> None:
        """Raise `OverBudget` from the command that takes `busy_ns` past `until_ns` (None: no limit)."""
        self._busy_limit = until_ns

    def _spent(self, ns: int, commands: int) -> None:
        self.busy_ns += ns
        self.commands += commands
        if self._busy_limit is not None and self.busy_ns > self._busy_limit:
            raise OverBudget(f"{self.busy_ns / 60e9:.2f} device minutes used, {self._busy_limit / 60e9:.2f} allowed")

    def allow_writes(self, lo: int, hi: int) -> None:
        """Writes are refused except to LBNs in [lo, hi)."""
        self._write_range = (lo, hi)

    @property
    def writable(self) -> Optional[Tuple[int, int]]:
        return self._write_range

    @abstractmethod
    def now_ns(self) -> int:
        """The device clock, ns."""

    @abstractmethod
    def _io(self, lbn: int, blocks: int, write: bool) -> int:
        """Do one command now; the clock time its completion was learned, ns."""

    @abstractmethod
    def idle_until(self, t_ns: int) -> None:
        """Let the clock reach `t_ns` with nothing outstanding."""

    def read(self, lbn: int, blocks: int = 1) -> int:
        return self._timed(lbn, blocks, False)

    def read_batch(self, cmds: list) -> list:
        """Submit the reads `cmds` [(lbn, blocks), ...] together, now, in that
        order; the clock time each one's completion was learned, in the
        order given."""
        if not cmds:
            return []
        for lbn, blocks in cmds:
            self._check(lbn, blocks)
        t0 = self.now_ns()
        if self.queued:
            done = self._io_batch(list(cmds))
        else:
            done = [self._io(lbn, blocks, False) for lbn, blocks in cmds]
        self._spent(max(done) - t0, len(cmds))
        return done

    def _io_batch(self, cmds: list) -> list:
        """All of `cmds` outstanding at once (devices with `queued`)."""
        raise NotImplementedError

    def write(self, lbn: int, blocks: int = 1) -> int:
        w = self._write_range
        if w is None or lbn < w[0] or lbn + blocks > w[1]:
            raise DeviceError(f"write of blocks {lbn}-{lbn + blocks - 1} refused: "
                              f"outside --allow-writes {'(none given)' if w is None else f'{w[0]}-{w[1] - 1}'}")
        return self._timed(lbn, blocks, True)

    def _check(self, lbn: int, blocks: int) -> None:
        if lbn < 0 or blocks < 1 or lbn + blocks > self.blocks:
            raise DeviceError(f"blocks {lbn}-{lbn + blocks - 1} outside the device (0-{self.blocks - 1})")

    def _timed(self, lbn: int, blocks: int, write: bool) -> int:
        self._check(lbn, blocks)
        t0 = self.now_ns()
        t1 = self._io(lbn, blocks, write)
        self._spent(t1 - t0, 1)
        return t1

    def idle(self, ns: int) -> None:
        self.idle_until(self.now_ns() + int(ns))

    def close(self) -> None:
        pass
