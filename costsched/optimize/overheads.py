"""The restart model (`Overheads`): the stated assumptions of what a restart and a planned
move cost in time, read by the decision model (`costsched.optimize.decision`) and set by
the configuration's [migration] section, which loads this alone (none of the model's
arrays)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class Overheads:
    """The restart model, for recoveries after a preemption and for planned moves."""

    restart_minutes: float = 10.0  # boot and set-up of a new instance
    warmup_minutes: float = 5.0  # to full speed
    transfer_gbps: float = 1.0  # checkpoint copy and restore
    overlap_minutes: float = 0.0  # old instance billed while it checkpoints (planned move)
    # Work redone after a planned move; None = half the job's checkpoint interval.
    lost_work_minutes: float | None = None
    egress: bool = True  # charge the checkpoint's egress on a move
    # A gang's nodes finding one another once all are up (torchrun's rendezvous, the
    # collectives' set-up): part of a gang's every restart and move (`gang`).
    rendezvous_minutes: float = 3.0

    @classmethod
    def free(cls) -> Overheads:
        """Every move and every restart free (the assumption of published trace analyses)."""
        return cls(0.0, 0.0, math.inf, 0.0, 0.0, egress=False, rendezvous_minutes=0.0)

    def gang(self, nodes: int) -> Overheads:
        """The overheads of a job of `nodes` instances: a gang's restart is the boot and
        set-up, then the rendezvous (unchanged for one node, or once applied)."""
        if nodes <= 1 or not self.rendezvous_minutes:
            return self
        return replace(self, restart_minutes=self.restart_minutes + self.rendezvous_minutes,
                       rendezvous_minutes=0.0)

    def booting_none(self) -> Overheads:
        """The model where the launcher boots no instance (`launchers.start_left_out`): a
        restart there has no boot and set-up, warm-up, rendezvous or checkpoint copy (its
        instances read the checkpoint where it is), as its start has none; the work lost,
        the egress and the overlap of a move stand."""
        return replace(self, restart_minutes=0.0, warmup_minutes=0.0, transfer_gbps=math.inf,
                       rendezvous_minutes=0.0)

    def restart_hours(self, checkpoint_gb: float) -> float:
        """Hours from a stop to full speed on a new instance: boot, warm-up, copy."""
        copy = checkpoint_gb * 8 / self.transfer_gbps / 3600 if checkpoint_gb > 0 else 0.0
        return (self.restart_minutes + self.warmup_minutes) / 60 + copy

    def restart_parts(self, checkpoint_gb: float, nodes: int = 1) -> dict[str, float]:
        """`restart_hours` of a job of `nodes` instances item by item (hours), as
        `gang(nodes).restart_hours` adds them: "boot" (boot and set-up), "warmup", "copy"
        (the checkpoint at the transfer rate) and, for a gang not yet `gang`ed,
        "rendezvous"."""
        copy = checkpoint_gb * 8 / self.transfer_gbps / 3600 if checkpoint_gb > 0 else 0.0
        parts = {"boot": self.restart_minutes / 60, "warmup": self.warmup_minutes / 60,
                 "copy": copy}
        if nodes > 1 and self.rendezvous_minutes:
            parts["rendezvous"] = self.rendezvous_minutes / 60
        return parts

    def restart_words(self, checkpoint_gb: float, nodes: int, boot_key: str) -> str:
        """`restart_parts` in words, each with the setting it comes from: '0.1 min boot
        and set-up (BOOT_KEY) + 5 min warm-up ([migration] warmup_minutes) + ...'."""
        parts = self.restart_parts(checkpoint_gb, nodes)
        said = [f"{_minutes(parts['boot'])} boot and set-up ({boot_key})",
                f"{_minutes(parts['warmup'])} warm-up ([migration] warmup_minutes)"]
        if parts["copy"]:
            said.append(f"{_minutes(parts['copy'])} to copy the {_size(checkpoint_gb)} "
                        f"checkpoint at {self.transfer_gbps:g} Gbit/s ([migration] "
                        "transfer_gbps)")
        if "rendezvous" in parts:
            # No setting changes it: said as the fixed assumption it is, and where.
            said.append(f"{_minutes(parts['rendezvous'])} for the {nodes} nodes' rendezvous "
                        "(a fixed assumption, no setting: docs/multi-node.md)")
        return " + ".join(said)

    def lost_work_hours(self, checkpoint_hours: float) -> float:
        if self.lost_work_minutes is None:
            return checkpoint_hours / 2
        return self.lost_work_minutes / 60

    def lost_work_words(self, checkpoint_hours: float, interval_key: str) -> str:
        """`lost_work_hours` in words, with the setting it comes from: '15 min, half the
        checkpoint interval of 30 min (INTERVAL_KEY; [migration] lost_work_minutes sets
        another figure)', or '10 min ([migration] lost_work_minutes)' where that sets it."""
        hours = self.lost_work_hours(checkpoint_hours)
        if self.lost_work_minutes is not None:
            return f"{_minutes(hours)} ([migration] lost_work_minutes)"
        return (f"{_minutes(hours)}, half the checkpoint interval of "
                f"{_minutes(checkpoint_hours)} ({interval_key}; [migration] "
                "lost_work_minutes sets another figure)")

    def move_idle_hours(self, checkpoint_gb: float, checkpoint_hours: float) -> float:
        """Hours billed on the new instance of a planned move without progress."""
        return self.restart_hours(checkpoint_gb) + self.lost_work_hours(checkpoint_hours)

    @property
    def overlap_hours(self) -> float:
        return self.overlap_minutes / 60

    def egress_gb(self, checkpoint_gb: float) -> float:
        """GB of egress charged per move."""
        return checkpoint_gb if self.egress else 0.0


def _minutes(hours: float) -> str:
    """'0.1 min', '5 min', '0.8 s', 'under 0.01 s': a part of a restart as it reads best."""
    minutes = hours * 60
    if 0 < minutes * 60 < 0.01:  # (a checkpoint of a few bytes copied)
        return "under 0.01 s"
    return f"{minutes * 60:.2g} s" if 0 < minutes < 0.1 else f"{minutes:.4g} min"


def _size(gb: float) -> str:
    """A checkpoint's size: '1 GB', '0.2 GB', '34 KB', '26 bytes'."""
    if gb >= 0.01:
        return f"{gb:g} GB"
    return f"{gb * 1e6:.3g} KB" if gb >= 1e-6 else f"{gb * 1e9:.0f} bytes"
