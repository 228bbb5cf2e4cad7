"""Count the SASS instructions of each microkernel in exl3_dq_count.cu.

Compile first (util.cuh with its cuBLAS helpers removed):

    nvcc -arch=sm_86 -cubin -O3 -std=c++17 -I<exllamav3 v1.0.0 exllamav3_ext> -o k.cubin exl3_dq_count.cu

then run ``python exl3_dq_count.py k.cubin [--dump]``. SASS instructions are 16 bytes each; NOPs
are left out. For each (bits, codebook, mode) it prints the counts with 1, 2 and 3 calls per loop
iteration and their increments: one ``dq_dispatch`` call (8 weights) plus the 7 HADD2 of the loop's
sum. engine/quant/storage.py ``EXL3_DQ_INSTRUCTIONS_PER_8`` holds the increments less those 7.
"""

import re
import struct
import sys

SASS_NOP = 0x918
KERNEL_NAME = re.compile(r"kernILi(\d)ELi(\d)ELi(\d)ELi(\d)E")
CASES = [(1, 2, 1), (2, 2, 1), (3, 2, 1), (4, 2, 1), (5, 2, 1), (6, 2, 1), (7, 2, 1), (8, 2, 1),
         (4, 1, 1), (6, 1, 1), (4, 2, 0), (6, 2, 0)]


def sections(elf: bytes) -> list[tuple[str, int, int]]:
    """(name, offset, size) of every section of a 64-bit ELF file."""
    header_offset = struct.unpack_from("<Q", elf, 0x28)[0]
    entry_size, count, names_index = struct.unpack_from("<HHH", elf, 0x3A)
    raw = []
    for index in range(count):
        name, _type, _flags, _addr, offset, size = struct.unpack_from("<IIQQQQ", elf, header_offset + index * entry_size)
        raw.append((name, offset, size))
    names_offset = raw[names_index][1]

    def name_at(position: int) -> str:
        end = elf.index(b"\0", names_offset + position)
        return elf[names_offset + position:end].decode()

    return [(name_at(name), offset, size) for name, offset, size in raw]


def kernel_opcodes(elf: bytes) -> dict[tuple[int, ...], list[int]]:
    """Opcode (low 12 bits) of every instruction of each kern<bits, cb, mode, reps>, NOPs left out."""
    kernels = {}
    for name, offset, size in sections(elf):
        match = KERNEL_NAME.search(name) if name.startswith(".text.") else None
        if match:
            opcodes = [struct.unpack_from("<Q", elf, offset + 16 * i)[0] & 0xFFF for i in range(size // 16)]
            kernels[tuple(map(int, match.groups()))] = [op for op in opcodes if op != SASS_NOP]
    return kernels


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else "k.cubin"
    with open(path, "rb") as handle:
        kernels = kernel_opcodes(handle.read())
    for bits, codebook, mode in CASES:
        counts = [len(kernels[(bits, codebook, mode, reps)]) for reps in (1, 2, 3)]
        print(bits, codebook, mode, counts, "per call", counts[1] - counts[0], counts[2] - counts[1])
    if "--dump" in sys.argv:
        for key in [(4, 2, 1, 1), (6, 2, 1, 1)]:
            print(key, " ".join(f"{op:03x}" for op in kernels[key]))


if __name__ == "__main__":
    main()
