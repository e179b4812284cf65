"""benchmarks/gpu_check.py, the one command for a GPU machine, as a CPU dry run: every figure
is written and the CPU-vs-device parity check runs."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).parents[2]


def test_gpu_check_dry_run_on_cpu_writes_every_figure(tmp_path):
    out = tmp_path / "gpu_check.json"
    command = [
        sys.executable, "benchmarks/gpu_check.py", "--device", "cpu", "--train-presets", "tiny", "--infer-preset", "tiny",
        "--parity-preset", "tiny", "--batch-sizes", "2", "4", "--steps", "1", "--repeats", "1", "--batch-size", "4",
        "--lines", "200", "--out", str(out),
    ]  # fmt: skip
    result = subprocess.run(
        command, cwd=REPO, env={**os.environ, "OMP_NUM_THREADS": "1"}, capture_output=True, text=True, timeout=1800
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["parity"]["within_1e-4"] is True and report["parity"]["fast_max_abs_diff"] <= 1e-4
    fp32 = report["pretraining_tokens_per_second"]["tiny"]["fp32"]
    assert isinstance(fp32, float) and fp32 > 0
    assert "bf16" in report["pretraining_tokens_per_second"]["tiny"]  # a rate, or why bf16 is not available here
    inference = report["inference_tokens_per_second"]["tiny"]
    assert set(inference) == {"2", "4"} and all(
        set(v) == {"exact", "fast fp32", "fast bf16"} for v in inference.values()
    )


def test_parity_flags_a_device_whose_outputs_differ(monkeypatch):
    """On the CPU both sides of the exact comparison are the same computation; the check
    itself must still fail when the device's outputs are off by more than 1e-4."""
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    import gpu_check

    class OffBy1e3(gpu_check.FastBiLM):
        def forward(self, *args, **kwargs):
            output = super().forward(*args, **kwargs)
            return output._replace(layers=output.layers + 1e-3)

    monkeypatch.setattr(gpu_check, "FastBiLM", OffBy1e3)
    figures = gpu_check.parity("tiny", "tiny", torch.device("cpu"), lines=200)
    assert figures["fast_max_abs_diff"] == pytest.approx(1e-3, rel=0.05)
    assert figures["within_1e-4"] is False
