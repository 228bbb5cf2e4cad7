"""Count the SASS instructions of each tile-load kernel in mmq_tile_count.cu (see its header).

``python mmq_tile_count.py k.cubin`` prints, per type, the kernel's instructions less the trivial
kernel's, per weight (128 weights a thread), and the global loads (LDG) and shared-memory stores
(STS) among them. engine/mmq_tiles.py LOAD_INSTRUCTIONS_* hold the per-weight totals.
"""

import re
import struct
import sys
from collections import Counter

from exl3_dq_count import sections

SASS_NOP = 0x918
#: Low 12 bits of the opcodes counted apart (sm_86): LDG and STS.
NAMED = {0x981: "LDG", 0x388: "STS"}
WEIGHTS_PER_THREAD = 128 * 256 / 256


def kernels(path: str) -> dict[str, list[int]]:
    with open(path, "rb") as handle:
        elf = handle.read()
    out = {}
    for name, offset, size in sections(elf):
        match = re.match(r"\.text\.kern_(\w+)$", name)
        if match:
            opcodes = [struct.unpack_from("<Q", elf, offset + 16 * i)[0] & 0xFFF for i in range(size // 16)]
            out[match.group(1)] = [op for op in opcodes if op != SASS_NOP]
    return out


def main() -> None:
    found = kernels(sys.argv[1] if len(sys.argv) > 1 else "k.cubin")
    base = len(found.pop("empty"))
    for type_name, opcodes in sorted(found.items()):
        named = Counter(NAMED.get(op, "other") for op in opcodes)
        per_weight = (len(opcodes) - base) / WEIGHTS_PER_THREAD
        print(f"{type_name:8s} {per_weight:.3f} per weight (LDG {named['LDG'] / WEIGHTS_PER_THREAD:.3f},"
              f" STS {named['STS'] / WEIGHTS_PER_THREAD:.3f})")


if __name__ == "__main__":
    main()
