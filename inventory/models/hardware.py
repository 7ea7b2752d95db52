"""GPU types, pools, machines and their network interfaces."""

from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from catalog.bounds import (
    GPU_BANDWIDTH_GBS_MAX,
    GPU_MEMORY_GIB_MAX,
    GPU_TFLOPS_MAX,
    NIC_SPEED_GBPS_MAX,
)
from inventory.validators import (
    GPU_COUNT_MAX,
    GPU_COUNT_MIN,
    normalize_tags,
    positive_validators,
    range_validators,
    validate_address,
    validate_hostname,
    validate_interface_name,
    validate_tags,
)


class Vendor(models.TextChoices):
    NVIDIA = "NVIDIA", "NVIDIA"
    AMD = "AMD", "AMD"
    INTEL = "Intel", "Intel"
    OTHER = "other", _("other")


class FormFactor(models.TextChoices):
    SXM = "sxm", _("SXM / OAM module")
    PCIE = "pcie", _("PCIe card")


class PoolKind(models.TextChoices):
    """How a pool's machines are held; the one table of pool kinds (inventory, decision records,
    filters and the API all name a kind from here)."""

    DEDICATED = "dedicated", _("Fixed, dedicated nodes")
    SHARED = "shared", _("Dynamic, shared pool")


class Interconnect(models.TextChoices):
    NVLINK = "nvlink", _("NVLink")
    NVSWITCH = "nvswitch", _("NVSwitch")
    PCIE = "pcie", _("PCIe only")


class MachineStatus(models.TextChoices):
    ACTIVE = "active", _("active")
    MAINTENANCE = "maintenance", _("maintenance")
    RETIRED = "retired", _("retired")


class NicKind(models.TextChoices):
    ETHERNET = "ethernet", _("Ethernet")
    ROCE = "roce", _("RoCE")
    INFINIBAND = "infiniband", _("InfiniBand")


class NicRole(models.TextChoices):
    DATA = "data", _("data")
    MANAGEMENT = "management", _("management")


class GpuType(models.Model):
    """A GPU model from a datasheet: memory, bandwidth, compute and links."""

    slug = models.SlugField(_("slug"), max_length=60, unique=True)
    name = models.CharField(_("name"), max_length=100)
    vendor = models.CharField(_("vendor"), max_length=20, choices=Vendor, default=Vendor.NVIDIA)
    memory_gib = models.FloatField(
        _("memory (GiB)"), validators=positive_validators(_("Memory (GiB)"), GPU_MEMORY_GIB_MAX)
    )
    driver_visible_gib = models.FloatField(
        _("driver-visible memory (GiB)"),
        null=True,
        blank=True,
        validators=positive_validators(_("Driver-visible memory (GiB)"), GPU_MEMORY_GIB_MAX),
        help_text=_("What the driver reports as total memory (vLLM's total_gpu_memory)."),
    )
    hbm_bandwidth_gbs = models.FloatField(
        _("memory bandwidth (GB/s)"),
        validators=positive_validators(_("Memory bandwidth (GB/s)"), GPU_BANDWIDTH_GBS_MAX),
    )
    bf16_dense_tflops = models.FloatField(
        _("dense BF16 TFLOPS"),
        validators=positive_validators(_("Dense BF16 TFLOPS"), GPU_TFLOPS_MAX),
    )
    fp8_support = models.BooleanField(_("FP8 support"), default=False)
    nvlink_bandwidth_gbs = models.FloatField(
        _("NVLink bandwidth per GPU (GB/s)"),
        default=0,
        validators=range_validators(
            _("NVLink bandwidth per GPU (GB/s)"), 0, int(GPU_BANDWIDTH_GBS_MAX)
        ),
        help_text=_("Aggregate NVLink bandwidth of one GPU; 0 for PCIe-only parts."),
    )
    form_factor = models.CharField(_("form factor"), max_length=10, choices=FormFactor)
    source = models.CharField(
        _("source"), max_length=300, blank=True, help_text=_("Datasheet the figures come from.")
    )
    user_modified = models.BooleanField(
        _("edited by a user"),
        default=False,
        help_text=_("load_catalog leaves rows edited by a user alone."),
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]
        verbose_name = _("GPU type")
        verbose_name_plural = _("GPU types")
        constraints = [
            models.CheckConstraint(condition=Q(memory_gib__gt=0), name="gputype_memory_gib_gt_0"),
            models.CheckConstraint(
                condition=Q(driver_visible_gib__isnull=True) | Q(driver_visible_gib__gt=0),
                name="gputype_driver_visible_gib_gt_0",
            ),
            models.CheckConstraint(
                condition=Q(hbm_bandwidth_gbs__gt=0), name="gputype_hbm_bandwidth_gbs_gt_0"
            ),
            models.CheckConstraint(
                condition=Q(bf16_dense_tflops__gt=0), name="gputype_bf16_dense_tflops_gt_0"
            ),
            models.CheckConstraint(
                condition=Q(nvlink_bandwidth_gbs__gte=0), name="gputype_nvlink_bandwidth_gbs_gte_0"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("inventory:gputype-detail", kwargs={"pk": self.pk})

    def clean(self) -> None:
        from django.core.exceptions import ValidationError

        if (
            self.driver_visible_gib is not None
            and self.memory_gib is not None
            and self.driver_visible_gib > self.memory_gib
        ):
            raise ValidationError(
                {
                    "driver_visible_gib": _(
                        "Driver-visible memory (GiB) must be between 0 and the memory (%(max)s)."
                    )
                    % {"max": self.memory_gib}
                }
            )


class Pool(models.Model):
    """A named group of machines; shared pools are scheduled by a platform such as Ray."""

    name = models.CharField(_("name"), max_length=100, unique=True)
    kind = models.CharField(_("kind"), max_length=20, choices=PoolKind, default=PoolKind.DEDICATED)
    description = models.TextField(_("description"), blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]
        verbose_name = _("pool")
        verbose_name_plural = _("pools")

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("inventory:pool-detail", kwargs={"pk": self.pk})


# The fields a user edits on a machine (form, API, bulk import and export columns).
MACHINE_FIELDS = [
    "hostname",
    "management_address",
    "gpu_metrics_url",
    "datacenter",
    "rack",
    "pool",
    "gpu_type",
    "gpu_count",
    "interconnect",
    "cpu_cores",
    "ram_gib",
    "status",
    "owner_team",
    "tags",
    "notes",
]


class Machine(models.Model):
    """One GPU server: its GPUs, links, place, owner and state."""

    hostname = models.CharField(
        _("hostname"),
        max_length=253,
        unique=True,
        validators=[validate_hostname],
        error_messages={"unique": _("A machine with this hostname already exists.")},
    )
    management_address = models.CharField(
        _("management address"), max_length=253, blank=True, validators=[validate_address]
    )
    gpu_metrics_url = models.URLField(
        _("GPU metrics URL"),
        max_length=500,
        blank=True,
        help_text=_(
            "The machine's GPU exporter: dcgm-exporter (e.g. http://10.0.0.5:9400) or "
            "nvidia_gpu_exporter (e.g. http://10.0.0.5:9835). Monitoring registers one GPU "
            "target per machine that has one."
        ),
    )
    datacenter = models.CharField(_("datacenter"), max_length=100, blank=True)
    rack = models.CharField(_("rack"), max_length=100, blank=True)
    pool = models.ForeignKey(
        Pool,
        verbose_name=_("pool"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="machines",
    )
    gpu_type = models.ForeignKey(
        GpuType, verbose_name=_("GPU type"), on_delete=models.PROTECT, related_name="machines"
    )
    gpu_count = models.PositiveSmallIntegerField(
        _("GPU count"), validators=range_validators(_("GPU count"), GPU_COUNT_MIN, GPU_COUNT_MAX)
    )
    interconnect = models.CharField(
        _("intra-node interconnect"), max_length=20, choices=Interconnect
    )
    cpu_cores = models.PositiveIntegerField(
        _("CPU cores"), null=True, blank=True, validators=range_validators(_("CPU cores"), 1, 4096)
    )
    ram_gib = models.PositiveIntegerField(
        _("RAM (GiB)"),
        null=True,
        blank=True,
        validators=range_validators(_("RAM (GiB)"), 1, 65536),
    )
    status = models.CharField(
        _("status"), max_length=20, choices=MachineStatus, default=MachineStatus.ACTIVE
    )
    owner_team = models.CharField(_("owner team"), max_length=100, blank=True)
    tags = models.CharField(
        _("tags"),
        max_length=500,
        blank=True,
        validators=[validate_tags],
        help_text=_("Comma-separated, e.g. prod,gpu-a."),
    )
    notes = models.TextField(_("notes"), blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    history = HistoricalRecords()

    class Meta:
        ordering = ["hostname"]
        verbose_name = _("machine")
        verbose_name_plural = _("machines")
        constraints = [
            models.CheckConstraint(
                condition=Q(gpu_count__gte=GPU_COUNT_MIN, gpu_count__lte=GPU_COUNT_MAX),
                name="machine_gpu_count_1_64",
            ),
            models.CheckConstraint(
                condition=Q(cpu_cores__isnull=True) | Q(cpu_cores__gte=1),
                name="machine_cpu_cores_gte_1",
            ),
            models.CheckConstraint(
                condition=Q(ram_gib__isnull=True) | Q(ram_gib__gte=1),
                name="machine_ram_gib_gte_1",
            ),
        ]

    def __str__(self) -> str:
        return self.hostname

    def get_absolute_url(self) -> str:
        return reverse("inventory:machine-detail", kwargs={"pk": self.pk})

    def clean(self) -> None:
        self.hostname = (self.hostname or "").strip().lower()
        self.tags = normalize_tags(self.tags)

    @property
    def tag_list(self) -> list[str]:
        return [tag for tag in self.tags.split(",") if tag]


class NetworkInterface(models.Model):
    """A NIC of a machine; the data NICs carry NCCL traffic between machines."""

    machine = models.ForeignKey(
        Machine, verbose_name=_("machine"), on_delete=models.CASCADE, related_name="nics"
    )
    name = models.CharField(
        _("interface name"),
        max_length=15,
        validators=[validate_interface_name],
        help_text=_("As the OS names it (eth1, ens3f0); used for NCCL_SOCKET_IFNAME."),
    )
    speed_gbps = models.FloatField(
        _("speed (Gb/s)"),
        validators=positive_validators(_("NIC speed (Gb/s)"), NIC_SPEED_GBPS_MAX),
    )
    kind = models.CharField(_("kind"), max_length=20, choices=NicKind, default=NicKind.ETHERNET)
    role = models.CharField(_("role"), max_length=20, choices=NicRole, default=NicRole.DATA)

    history = HistoricalRecords()

    class Meta:
        ordering = ["machine", "name"]
        verbose_name = _("network interface")
        verbose_name_plural = _("network interfaces")
        constraints = [
            models.UniqueConstraint(
                fields=["machine", "name"],
                name="nic_unique_name_per_machine",
                violation_error_message=_("This machine already has an interface with this name."),
            ),
            models.CheckConstraint(condition=Q(speed_gbps__gt=0), name="nic_speed_gbps_gt_0"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.speed_gbps:g} Gb/s {self.get_kind_display()})"
