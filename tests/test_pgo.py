"""The release build is profile-guided (issue 35; docs/performance.md, "Profile-guided build"):
the profile in the repository is one rustc can read, and the Makefile's flags point at it."""

from __future__ import annotations

import lzma
import re
import shlex
import struct
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROFILE = ROOT / "pgo" / "disksched.profdata.xz"
# llvm/ProfileData/InstrProf.h: IndexedInstrProf::Magic, the indexed (merged) format rustc's -Cprofile-use reads;
# a raw .profraw, the instrumented program's own output, starts with a different magic and would not build.
INDEXED_MAGIC = 0x8169666F72706CFF


def test_profile_is_an_indexed_llvm_profile():
    data = lzma.open(PROFILE).read()
    magic, version = struct.unpack_from("<QQ", data)
    assert magic == INDEXED_MAGIC, f"{PROFILE.name} holds no indexed LLVM profile (magic {magic:#x})"
    # Bit 56 (VARIANT_MASK_IR_PROF): counts of LLVM IR, as rustc's -Cprofile-generate takes them (clang's
    # front-end profiles lack it, and rustc cannot use them).
    assert version >> 56 & 1, f"{PROFILE.name} is not an IR-level profile (version word {version:#x})"


def profile_flags() -> list[str]:
    """RUSTFLAGS as the Makefile builds with them; the test skips where it builds without the profile on purpose
    (a rustc whose LLVM is older than the profile's cannot read it: the same results, unguided)."""
    out = subprocess.run(["make", "-s", "--no-print-directory", "pgo-flags"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    if "is older than the profile's" in out:
        pytest.skip(out.splitlines()[0])
    return out.split()


def test_makefile_builds_with_the_profile():
    flags = profile_flags()
    used = [f.removeprefix("-Cprofile-use=") for f in flags if f.startswith("-Cprofile-use=")]
    assert len(used) == 1, f"RUSTFLAGS {shlex.join(flags)} name no single profile"
    # The file rustc reads is the repository's profile, decompressed: a new profile is a new name, so cargo rebuilds.
    assert Path(used[0]).read_bytes() == lzma.open(PROFILE).read()


# A Rust function's symbol (legacy mangling) ends in a hash of its crate's identity, which cargo derives from the
# crate's version, features and dependencies: a profile made before such a change names no function of this build.
CORE_SYMBOL = re.compile(rb"_ZN14disksched_core[\w$.]+?17h[0-9a-f]{16}E")


def test_profile_names_the_functions_of_this_build():
    import disksched._core

    profile_flags()
    profiled = set(CORE_SYMBOL.findall(lzma.open(PROFILE).read()))
    nm = subprocess.run(["nm", "--defined-only", disksched._core.__file__], check=True, capture_output=True).stdout
    built = set(CORE_SYMBOL.findall(nm))
    assert built, f"no disksched_core symbol in {disksched._core.__file__}"
    # Fresh, about half of the built core's functions have counts (the rest never ran in the training set, or were
    # inlined there); stale, none do, and the build is the unguided one, 13-17% more instructions a request.
    share = len(built & profiled) / len(built)
    assert share >= 0.2, (f"{PROFILE.name} has counts for {share:.0%} of the {len(built)} core functions built: "
                          "it is stale (a dependency or the toolchain changed); run tools/pgo_profile.py")
