"""Processes started by torchrun: ranks, devices and the few collectives training needs.

Without torchrun (no WORLD_SIZE in the environment) this is a single process and every
collective is the identity.
"""

import os
from dataclasses import dataclass
from typing import Any, List

import torch
import torch.distributed as dist


@dataclass
class Processes:
    rank: int
    world_size: int
    device: torch.device

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    def sum(self, tensor: torch.Tensor) -> torch.Tensor:
        """The element-wise sum over all processes (float64 on CPU, so it is exact enough to compare)."""
        if not self.distributed:
            return tensor
        total = tensor.detach().to(self.device, torch.float64 if self.device.type == "cpu" else tensor.dtype)
        dist.all_reduce(total)
        return total.to(tensor.dtype)

    def gather(self, obj: Any) -> List[Any]:
        if not self.distributed:
            return [obj]
        out: List[Any] = [None] * self.world_size
        dist.all_gather_object(out, obj)
        return out

    def barrier(self) -> None:
        if self.distributed:
            dist.barrier()


def start_processes(device: str = "auto") -> Processes:
    """Join the torchrun process group (nccl on GPU, gloo on CPU) and pick this rank's device:
    ``device`` is auto (cuda when available), cpu, cuda (GPU LOCAL_RANK under torchrun, else
    GPU 0) or cuda:N (GPU N, one process)."""
    kind, _, index = device.partition(":")
    if kind not in ("auto", "cpu", "cuda") or (index and (kind != "cuda" or not index.isdigit())):
        raise ValueError(f"system.device must be auto, cpu, cuda or cuda:N (GPU N), got {device!r}.")
    use_cuda = torch.cuda.is_available() if kind == "auto" else kind == "cuda"
    if use_cuda and not torch.cuda.is_available():
        raise ValueError(
            f"system.device is {device} but torch sees no GPU; use --system.device auto (or cpu, --gpu-id -1)."
        )
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if index and world_size > 1:
        raise ValueError(
            f"system.device = {device} names one GPU; under torchrun use system.device = cuda (each process takes GPU LOCAL_RANK)."
        )
    gpu = int(index) if index else local_rank
    if use_cuda:
        if gpu >= torch.cuda.device_count():
            raise ValueError(
                f"system.device = {device}: torch sees {torch.cuda.device_count()} GPU(s), numbered from 0."
            )
        torch.cuda.set_device(gpu)
    if world_size > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if use_cuda else "gloo")
    return Processes(rank, world_size, torch.device("cuda", gpu) if use_cuda else torch.device("cpu"))


def stop_processes() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()
