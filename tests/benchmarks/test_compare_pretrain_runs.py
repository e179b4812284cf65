"""benchmarks/compare_pretrain_runs.py: a run's speed by quarter, from its metrics.jsonl."""

import importlib.util
from pathlib import Path

REPO = Path(__file__).parents[2]


def _module():
    spec = importlib.util.spec_from_file_location(
        "compare_pretrain_runs", REPO / "benchmarks" / "compare_pretrain_runs.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_speed_by_quarter_shows_a_run_that_slows_with_a_steady_host():
    rows, cpu = [], 0.0
    for step in range(0, 850, 50):
        per_step = 1.0 if step <= 400 else 2.0  # the second half costs twice the CPU per step
        cpu += 50 * per_step if step else 0.0
        rows.append(
            {
                "step": step,
                "tokens": step * 100,
                "tokens_per_second": 100.0 / per_step if step else 0.0,
                "cpu_seconds": cpu,
                "dev_perplexity": {"mean": 50.0} if step == 400 else None,
                "matmul_gflops": 300.0,
                "minor_faults_per_step": 10 * step,
            }
        )
    lines = _module().speed_by_quarter(rows)
    assert len(lines) == 4
    assert "100 tokens/s" in lines[0] and "1.000 CPU s/step" in lines[0] and "300 matmul GFLOP/s" in lines[0]
    assert "50 tokens/s" in lines[-1] and "2.000 CPU s/step" in lines[-1] and "300 matmul GFLOP/s" in lines[-1]
    assert "faults/step" in lines[-1]


def test_the_cpu_time_after_an_evaluation_is_left_out():
    cpu = [0.0, 1.0, 2.0, 103.0, 104.0]  # step 2 evaluated: 100 s of its CPU time fall before step 3
    rows = [
        {"step": s, "tokens_per_second": 1.0, "cpu_seconds": c, "dev_perplexity": {"mean": 9.0} if s == 2 else None}
        for s, c in enumerate(cpu)
    ]
    lines = _module().speed_by_quarter(rows)
    assert len(lines) == 3 and all("1.000 CPU s/step" in line for line in lines)


def test_speed_by_quarter_of_a_log_without_the_probe():
    rows = [{"step": s, "tokens_per_second": 10.0, "cpu_seconds": s * 0.5, "dev_perplexity": None} for s in range(1, 9)]
    lines = _module().speed_by_quarter(rows)
    assert lines and all("0.500 CPU s/step" in line and "GFLOP" not in line for line in lines)
