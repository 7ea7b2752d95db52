"""factory_boy factories for the inventory models (other apps' tests reuse them).

Factories write rows directly; tests of the services call the services.
"""

import factory
from django.contrib.auth import get_user_model

from inventory.models import (
    FormFactor,
    GpuType,
    Interconnect,
    Machine,
    MachineStatus,
    ModelSpec,
    NetworkInterface,
    NicKind,
    NicRole,
    Pool,
    PoolKind,
)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")


class GpuTypeFactory(factory.django.DjangoModelFactory):
    """An A800 80G SXM by default (datasheet figures as in the catalog)."""

    class Meta:
        model = GpuType
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"test-gpu-{n}")
    name = factory.LazyAttribute(lambda o: o.slug.upper())
    vendor = "NVIDIA"
    memory_gib = 80.0
    driver_visible_gib = 79.15
    hbm_bandwidth_gbs = 2039.0
    bf16_dense_tflops = 312.0
    fp8_support = False
    nvlink_bandwidth_gbs = 400.0
    form_factor = FormFactor.SXM
    source = "test datasheet"

    class Params:
        a800 = factory.Trait(slug="a800-80g-sxm", name="A800 80GB SXM4", nvlink_bandwidth_gbs=400.0)
        a100 = factory.Trait(slug="a100-80g-sxm", name="A100 80GB SXM4", nvlink_bandwidth_gbs=600.0)
        rtx4090 = factory.Trait(
            slug="rtx-4090",
            name="GeForce RTX 4090 24GB",
            memory_gib=24.0,
            driver_visible_gib=23.65,
            hbm_bandwidth_gbs=1008.0,
            bf16_dense_tflops=165.2,
            fp8_support=True,
            nvlink_bandwidth_gbs=0.0,
            form_factor=FormFactor.PCIE,
        )


class PoolFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Pool
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"pool-{n}")
    kind = PoolKind.DEDICATED
    description = ""


class MachineFactory(factory.django.DjangoModelFactory):
    """An 8-GPU NVLink node with one 25 GbE data NIC (eth1) and a 1 GbE management NIC.

    `MachineFactory(nics=[])` makes a machine without NICs; `nics=[{"name": ...}, ...]` sets them.
    """

    class Meta:
        model = Machine
        skip_postgeneration_save = True

    hostname = factory.Sequence(lambda n: f"gpu-node-{n:03d}")
    management_address = factory.Sequence(lambda n: f"10.0.{n // 250}.{n % 250 + 1}")
    datacenter = "dc1"
    rack = "r01"
    pool = factory.SubFactory(PoolFactory)
    gpu_type = factory.SubFactory(GpuTypeFactory)
    gpu_count = 8
    interconnect = Interconnect.NVLINK
    cpu_cores = 128
    ram_gib = 1024
    status = MachineStatus.ACTIVE
    owner_team = "llm-platform"
    tags = ""
    notes = ""

    @factory.post_generation
    def nics(self, create: bool, extracted: list[dict] | None, **kwargs: object) -> None:
        if not create:
            return
        specs = (
            extracted
            if extracted is not None
            else [
                {
                    "name": "eth1",
                    "speed_gbps": 25.0,
                    "kind": NicKind.ETHERNET,
                    "role": NicRole.DATA,
                },
                {
                    "name": "eno1",
                    "speed_gbps": 1.0,
                    "kind": NicKind.ETHERNET,
                    "role": NicRole.MANAGEMENT,
                },
            ]
        )
        for spec in specs:
            NetworkInterface.objects.create(machine=self, **spec)


class NetworkInterfaceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = NetworkInterface

    machine = factory.SubFactory(MachineFactory, nics=[])
    name = factory.Sequence(lambda n: f"eth{n + 2}")
    speed_gbps = 25.0
    kind = NicKind.ETHERNET
    role = NicRole.DATA


class ModelSpecFactory(factory.django.DjangoModelFactory):
    """Llama-3.1-8B's architecture by default; parameter counts are filled from it."""

    class Meta:
        model = ModelSpec
        django_get_or_create = ("slug",)
        skip_postgeneration_save = True

    slug = factory.Sequence(lambda n: f"test-model-{n}")
    name = factory.LazyAttribute(lambda o: o.slug)
    family = "llama"
    model_type = "llama"
    num_layers = 32
    hidden_size = 4096
    num_attention_heads = 32
    num_kv_heads = 8
    head_dim = 128
    intermediate_size = 14336
    vocab_size = 128256
    max_position_embeddings = 131072

    @factory.post_generation
    def parameter_counts(self, create: bool, extracted: object, **kwargs: object) -> None:
        from inventory.architecture import parameter_counts

        self.total_params, self.active_params = parameter_counts(self)
        if create:
            self.save(update_fields=["total_params", "active_params"])
