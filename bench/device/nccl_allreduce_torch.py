"""Single-node all-reduce through PyTorch's NCCL backend, one process per GPU, with NCCL_DEBUG=INFO.

Used on the borrowed H200 machine when nccl-tests' source is not available there: it exercises the
same NCCL library (nvidia-nccl-cu13) so the live NCCL INFO log can be parsed (transport, version,
nRanks). Prints one line per size: bytes, time_us, algbw_GBps, busbw_GBps (busbw = algbw*2(n-1)/n).
"""

from __future__ import annotations

import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank: int, world: int, sizes: list[int], iters: int) -> None:
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    for size in sizes:
        x = torch.ones(size // 4, dtype=torch.float32, device="cuda")
        for _ in range(2):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        dt = (time.perf_counter() - t0) / iters
        algbw = size / dt / 1e9
        busbw = algbw * 2 * (world - 1) / world
        if rank == 0:
            print(f"allreduce {size:>12d} bytes {dt * 1e6:10.2f} us algbw {algbw:8.2f} GB/s busbw {busbw:8.2f} GB/s",
                  flush=True)
        ok = bool(torch.all(x == float(world) ** (iters + 2)).item()) if world > 1 else True
        if not ok and rank == 0:
            print(f"allreduce {size} WRONG RESULT", flush=True)
    dist.destroy_process_group()


def main() -> None:
    world = torch.cuda.device_count()
    sizes = [8 << 20 << i for i in range(8)]  # 8 MB .. 1 GB
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    mp.spawn(worker, args=(world, sizes, iters), nprocs=world, join=True)


if __name__ == "__main__":
    main()
