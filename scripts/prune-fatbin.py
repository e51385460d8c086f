#!/usr/bin/env python3
"""Zero the payloads of CUDA fat-binary entries a GPU will not load, so a library compresses small.

    prune-fatbin.py IN OUT [--keep-sm N]... [--drop-covered-ptx]

PyPI's libnccl.so.2 for CUDA 11 (192 MB) holds cubins for sm_35..sm_80 and PTX for compute_80. An sm_90
GPU (H100/H200) cannot run any of those cubins and JIT-compiles the PTX: this keeps every PTX entry and the
cubins of the --keep-sm architectures, and zeroes the other cubins' bytes in place (headers, sizes and
layout unchanged), so the file still loads and xz packs the zeros to nothing. --drop-covered-ptx also
zeroes the PTX of every fat binary that holds a kept cubin (cuBLAS: a cubin per kernel for sm_90 and PTX
beside it), which that GPU never compiles.
"""
import struct
import sys

MAGIC = struct.pack("<I", 0xBA55ED50)


def main():
    args = sys.argv[1:]
    drop_ptx = "--drop-covered-ptx" in args
    args = [a for a in args if a != "--drop-covered-ptx"]
    keep = {int(args[i + 1]) for i, a in enumerate(args) if a == "--keep-sm"}
    src, dst = [a for i, a in enumerate(args) if a != "--keep-sm" and (i == 0 or args[i - 1] != "--keep-sm")][:2]
    data = bytearray(open(src, "rb").read())
    zeroed = kept = 0
    pos = data.find(MAGIC)
    while pos != -1:
        _ver, header, fat_size = struct.unpack_from("<HHQ", data, pos + 4)
        if header != 16:
            pos = data.find(MAGIC, pos + 4)
            continue
        p, end = pos + header, pos + header + fat_size
        entries = []
        while p < end:
            kind, _u, entry_header, size = struct.unpack_from("<HHIQ", data, p)
            arch = struct.unpack_from("<I", data, p + 28)[0]
            entries.append((kind, arch, p + entry_header, size))
            p = p + entry_header + size
        # A container with a cubin the GPU loads never JIT-compiles its PTX.
        covered = drop_ptx and any(k == 2 and a in keep for k, a, _b, _s in entries)
        for kind, arch, body, size in entries:
            if (kind == 2 and arch not in keep) or (kind == 1 and covered):
                data[body:body + size] = bytes(size)
                zeroed += size
            else:
                kept += size
        pos = data.find(MAGIC, end)
    open(dst, "wb").write(data)
    print(f"prune-fatbin: kept {kept} bytes of PTX/cubins, zeroed {zeroed}")


main()
