"""The thread governor: torch's threads follow the cores other processes leave free."""

import os

import torch

from spacy_elmo.threads import ThreadGovernor, read_busy_seconds


class FakeMachine:
    """A clock, the machine's busy seconds and this process's CPU seconds, advanced by hand."""

    def __init__(self) -> None:
        self.now = self.busy = self.own = 0.0

    def run(self, seconds: float, others: float, own: float) -> None:
        self.now += seconds
        self.busy += seconds * (others + own)
        self.own += seconds * own


def _governor(machine: FakeMachine, **kwargs) -> ThreadGovernor:
    return ThreadGovernor(max_threads=2, interval=1.0, read_busy=lambda: machine.busy, clock=lambda: machine.now,
                          own_cpu=lambda: machine.own, cpus=[0, 1], **kwargs)  # fmt: skip


def test_threads_drop_to_the_free_cores_and_come_back(monkeypatch):
    monkeypatch.delenv("SPACY_ELMO_THREADS", raising=False)
    torch.set_num_threads(2)
    machine = FakeMachine()
    governor = _governor(machine)
    governor.update()  # the first look only starts the measurement
    machine.run(2.0, others=1.0, own=1.5)  # a busy process beside ours: one core left
    assert governor.update() == 1 and torch.get_num_threads() == 1
    machine.run(0.5, others=0.0, own=1.0)
    assert governor.update() == 1, "re-measured only after the interval"
    machine.run(2.0, others=0.1, own=1.0)  # the other process ended: both cores free (noise aside)
    assert governor.update() == 2 and torch.get_num_threads() == 2


def test_own_threads_do_not_count_as_others_and_the_ceiling_holds(monkeypatch):
    monkeypatch.delenv("SPACY_ELMO_THREADS", raising=False)
    torch.set_num_threads(2)
    machine = FakeMachine()
    governor = _governor(machine)
    governor.update()
    machine.run(2.0, others=0.0, own=2.0)  # only this process, on both cores
    assert governor.update() == 2
    ceiling = ThreadGovernor(max_threads=1, interval=1.0, read_busy=lambda: machine.busy, clock=lambda: machine.now,
                             own_cpu=lambda: machine.own, cpus=[0, 1])  # fmt: skip
    ceiling.update()
    machine.run(2.0, others=0.0, own=1.0)
    assert ceiling.update() == 1


def test_fixed_policy_and_disabled_governor_leave_torch_alone(monkeypatch):
    torch.set_num_threads(2)
    machine = FakeMachine()
    monkeypatch.setenv("SPACY_ELMO_THREADS", "fixed")
    fixed = _governor(machine)
    monkeypatch.delenv("SPACY_ELMO_THREADS")
    disabled = _governor(machine, enabled=False)
    for governor in (fixed, disabled):
        governor.update()
    machine.run(2.0, others=1.0, own=1.0)
    assert fixed.update() == 2 and disabled.update() == 2 and torch.get_num_threads() == 2


def test_busy_seconds_are_read_for_the_given_cpus(tmp_path):
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal: cpu0 busy 100+0+50+0+10+5+0 ticks, cpu1 busy 30
    stat.write_text(
        "cpu  130 0 50 900 20 10 5 0 0 0\ncpu0 100 0 50 400 10 10 5 0 0 0\ncpu1 30 0 0 500 10 0 0 0 0 0\nintr 1\n"
    )

    tick = os.sysconf("SC_CLK_TCK")
    assert read_busy_seconds([0], stat) == (100 + 50 + 10 + 5) / tick
    assert read_busy_seconds([0, 1], stat) == (165 + 30) / tick
    assert read_busy_seconds([0], tmp_path / "missing") is None


def test_the_users_own_thread_setting_becomes_the_ceiling(monkeypatch):
    monkeypatch.delenv("SPACY_ELMO_THREADS", raising=False)
    torch.set_num_threads(2)
    machine = FakeMachine()
    governor = _governor(machine)
    governor.update()
    torch.set_num_threads(1)  # the user's choice after the governor was made
    machine.run(2.0, others=0.0, own=1.0)
    assert governor.update() == 1 and torch.get_num_threads() == 1, (
        "an idle machine does not raise it past the user's 1"
    )
