"""What this CPU can do that decides a preset: BF16 instructions, read at run time.

Why at run time and from the kernel's list (``/proc/cpuinfo`` on Linux, read by
:func:`studio.core.system.cpu_flags`): the same install runs on a laptop and on a
cloud VM, and a BF16 model on a CPU without BF16 instructions still runs (torch
emulates it) but several times slower than FP32, the opposite of what the preset
promises. The kernel's flag list is what the CPU and the hypervisor really offer;
torch's own check (``torch.backends.mkldnn``) says only what oneDNN was built for.
"""

from __future__ import annotations

import functools

from studio.core import system

#: flags that give oneDNN native BF16 dot products: AVX-512 BF16 (Zen 4, Cooper Lake)
#: or AMX (Sapphire Rapids and later)
BF16_FLAGS = ("avx512_bf16", "amx_bf16")
#: flags worth naming in a benchmark's machine line
NOTABLE_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8")


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (Linux: the first processor's ``flags`` line); empty where unknown."""
    return system.cpu_flags()


def notable_flags() -> list[str]:
    """The flags of :data:`NOTABLE_FLAGS` this CPU has, in that order."""
    have = cpu_flags()
    return [f for f in NOTABLE_FLAGS if f in have]


def bf16_support() -> tuple[bool, str]:
    """``(True, which instructions)`` where BF16 runs natively, else ``(False, why not)``."""
    have = [f for f in BF16_FLAGS if f in cpu_flags()]
    if have:
        return True, f"CPU with {' and '.join(have)}"
    return False, ("this CPU has no BF16 instructions (avx512_bf16 or AMX); "
                   "BF16 would run emulated, slower than FP32")


__all__ = ["BF16_FLAGS", "bf16_support", "cpu_flags", "notable_flags"]
