"""`--gpu-id N` as spaCy's commands take it: -1 is the CPU, N >= 0 the CUDA device N."""

import torch


class DeviceError(ValueError):
    """A GPU was asked for that torch cannot use here."""


def torch_device(gpu_id: int) -> torch.device:
    """The torch device of a spaCy-style ``--gpu-id``."""
    if gpu_id < -1:
        raise DeviceError(f"--gpu-id must be -1 (the CPU) or the index of a CUDA device, got {gpu_id}.")
    if gpu_id == -1:
        return torch.device("cpu")
    if not torch.cuda.is_available():
        build = "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
        raise DeviceError(
            f"--gpu-id {gpu_id} asks for a GPU, but torch {torch.__version__} ({build}) sees no CUDA device. "
            "Use --gpu-id -1 to run on the CPU."
        )
    if gpu_id >= torch.cuda.device_count():
        raise DeviceError(f"--gpu-id {gpu_id}: torch sees {torch.cuda.device_count()} CUDA device(s), numbered from 0.")
    return torch.device("cuda", gpu_id)
