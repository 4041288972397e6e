"""A tiny data-parallel training loop for the lab's elastic-restart test (tests/integration/test_slurm_cases.py).

Run by torchrun (one worker per node, gloo over TCP, CPU only): fits y = 3x + 1 with gradients
all-reduced between the workers. After every step rank 0 saves {step, model, optimizer} to
$CLUSTERCTL_CHECKPOINT_DIR/ckpt.pt (written to a temporary file, then renamed: a reader never sees half
a checkpoint). On start rank 0 loads the checkpoint if there is one and broadcasts step and weights,
so every worker of a restarted group continues from the same step. Each step prints
``step S rank R restart C loss L``; each start prints ``start rank R restart C pid P host H resumed-from S``
(``resumed-from -1``: no checkpoint; ``host H`` before it), the end ``done rank R step S w W b B``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch
import torch.distributed as dist


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--step-seconds", type=float, default=1.0)
    args = ap.parse_args()
    if "GLOO_SOCKET_IFNAME" not in os.environ and Path("/sys/class/net/eth0").exists():
        os.environ["GLOO_SOCKET_IFNAME"] = "eth0"  # the lab's node network (the host name may map to loopback)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    ckpt = Path(os.environ["CLUSTERCTL_CHECKPOINT_DIR"]) / "ckpt.pt"

    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    start = torch.tensor([-1], dtype=torch.int64)
    if rank == 0 and ckpt.exists():
        state = torch.load(ckpt)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        start[0] = state["step"]
    dist.broadcast(start, 0)
    for p in model.parameters():
        dist.broadcast(p.data, 0)
    print(f"start rank {rank} restart {restart} pid {os.getpid()} host {os.uname().nodename} "
          f"resumed-from {int(start[0])}", flush=True)

    gen = torch.Generator().manual_seed(1234 + rank)
    for step in range(int(start[0]) + 1, args.steps):
        x = torch.rand(64, 1, generator=gen)
        loss = torch.nn.functional.mse_loss(model(x), 3 * x + 1)
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            assert p.grad is not None
            dist.all_reduce(p.grad)
            p.grad /= world
        opt.step()
        if rank == 0:
            tmp = ckpt.with_suffix(".tmp")
            torch.save({"step": step, "model": model.state_dict(), "opt": opt.state_dict()}, tmp)
            os.replace(tmp, ckpt)
        print(f"step {step} rank {rank} restart {restart} loss {loss.item():.5f}", flush=True)
        time.sleep(args.step_seconds)
    dist.barrier()
    w, b = model.weight.item(), model.bias.item()
    print(f"done rank {rank} step {args.steps - 1} w {w:.3f} b {b:.3f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
