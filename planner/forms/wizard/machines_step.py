"""Wizard step 4: the machines (the whole active fleet, a pool, ticked machines or a hand-made
cluster).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from catalog.data import load_gpus
from inventory.models import Machine, MachineStatus, Pool
from planner.forms.wizard.choices import (
    INTRA_LINK_CHOICES,
    NIC_KIND_CHOICES,
    POOL_KIND_CHOICES,
    SOURCE_CHOICES,
)
from planner.forms.wizard.load_step import optional_positive, positive_int

MEASURED_LINK_FIELDS = (
    "intra_node_bandwidth_gbs",
    "cross_node_bandwidth_gbs",
    "per_call_latency_us",
)


class MachinesStepForm(forms.Form):
    source = forms.ChoiceField(
        label=_("Which machines may this deployment use?"),
        choices=SOURCE_CHOICES,
        widget=forms.RadioSelect,
    )
    pool = forms.ModelChoiceField(
        label=_("Pool"),
        queryset=Pool.objects.order_by("name"),
        required=False,
        to_field_name="name",
    )
    machines = forms.MultipleChoiceField(
        label=_("Machines"), required=False, widget=forms.CheckboxSelectMultiple
    )
    pool_kind = forms.ChoiceField(
        label=_("Are these GPUs dedicated or shared?"),
        choices=POOL_KIND_CHOICES,
        required=False,
        widget=forms.RadioSelect,
        help_text=_("A shared pool needs the whole GPU group reserved at once."),
    )
    node_count = positive_int(_("Number of machines"), 1, 10_000, required=False)
    gpus_per_node = positive_int(_("GPUs per machine"), 1, 64, required=False)
    gpu = forms.ChoiceField(label=_("GPU"), required=False)
    intra_link = forms.ChoiceField(
        label=_("Link between GPUs inside a machine"), choices=INTRA_LINK_CHOICES, required=False
    )
    inter_node_gbps = forms.FloatField(
        label=_("Network between machines (Gb/s)"),
        required=False,
        min_value=0.1,
        help_text=_("25 for 25 GbE, 400 for 400 Gb InfiniBand."),
        error_messages={"min_value": _("Enter a speed above 0 Gb/s.")},
    )
    inter_node_kind = forms.ChoiceField(
        label=_("Network kind"), choices=NIC_KIND_CHOICES, required=False
    )
    # What the team measured replaces the catalog's link figures (spec "network").
    intra_node_bandwidth_gbs = optional_positive(
        _("Measured all-reduce bandwidth inside a machine (GB/s)"),
        _(
            "The busbw column, at large sizes, of nccl-tests all_reduce_perf -g N over N GPUs. "
            "Empty: the GPU's link."
        ),
    )
    cross_node_bandwidth_gbs = optional_positive(
        _("Measured bandwidth between machines (GB/s)"),
        _("nccl-tests between two machines, busbw at large sizes. Empty: the NIC's."),
    )
    per_call_latency_us = optional_positive(
        _("Measured all-reduce latency (µs)"),
        _("nccl-tests time at the smallest sizes. Empty: the link's."),
    )

    def __init__(self, *args: Any, machines: list[Machine] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.machine_rows = machines if machines is not None else active_machines()
        self.fields["machines"].choices = [(m.hostname, m.hostname) for m in self.machine_rows]
        self.fields["gpu"].choices = [
            (g.slug, f"{g.name} ({g.memory_gib:g} GiB)") for g in load_gpus().values()
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        source = data.get("source")
        if source == "fleet" and data.get("machines"):
            # Ticking machines selects them: the ticks are the answer, not the fleet default.
            source = data["source"] = "machines"
        if source == "pool" and not data.get("pool"):
            self.add_error("pool", _("Pick a pool."))
        if source == "machines" and not data.get("machines"):
            self.add_error("machines", _("Tick at least one machine."))
        if source == "fleet" and not self.machine_rows:
            self.add_error("source", _("The inventory has no active machine yet."))
        if source == "hypothetical":
            for key, message in (
                ("node_count", _("Enter the number of machines (1 to 10000).")),
                ("gpus_per_node", _("Enter the GPUs per machine: at least 1, at most 64.")),
                ("gpu", _("Pick a GPU.")),
                ("inter_node_gbps", _("Enter the network speed between machines in Gb/s.")),
            ):
                if not data.get(key) and key not in self.errors:
                    self.add_error(key, message)
        return data

    def spec_part(self) -> dict[str, Any]:
        d = self.cleaned_data
        source = d["source"]
        hardware: dict[str, Any]
        if source == "hypothetical":
            hardware = {
                "node_count": d["node_count"],
                "gpus_per_node": d["gpus_per_node"],
                "gpu": d["gpu"],
                "intra_link": d.get("intra_link") or "nvlink",
                "inter_node_gbps": d["inter_node_gbps"],
                "inter_node_kind": d.get("inter_node_kind") or "ethernet",
            }
        elif source == "pool":
            hardware = {"pool": d["pool"].name}
        elif source == "machines":
            hardware = {"hostnames": list(d["machines"])}
        else:
            hardware = {"fleet": True}
        if d.get("pool_kind"):
            hardware["pool_kind"] = d["pool_kind"]
        measured = {key: d[key] for key in MEASURED_LINK_FIELDS if d.get(key) is not None}
        return {"hardware": hardware, **({"network": measured} if measured else {})}

    @property
    def measured_links(self) -> list[forms.BoundField]:
        return [self[name] for name in MEASURED_LINK_FIELDS]

    @property
    def measured_links_given(self) -> bool:
        """Whether the measured-links fold opens: a value or an error in it."""
        return any(field.value() or field.errors for field in self.measured_links)


def active_machines() -> list[Machine]:
    """Return the active machines with GPU type, pool and NICs (three queries)."""
    from inventory.selectors import machine_list

    return list(machine_list(status=MachineStatus.ACTIVE).order_by("hostname"))
