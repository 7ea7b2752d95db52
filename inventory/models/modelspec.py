"""LLM architectures: the model catalog the planner sizes deployments from."""

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Mod
from django.db.models.lookups import Exact
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from catalog import identifiers
from inventory.validators import range_validators, validate_model_slug


class Dtype(models.TextChoices):
    BF16 = "bf16", "BF16"
    FP16 = "fp16", "FP16"


class CheckpointQuantization(models.TextChoices):
    NONE = "", _("none (full precision)")
    FP8 = "fp8", "FP8"
    INT8 = "int8", "INT8"
    INT4 = "int4", "INT4"
    MXFP4 = "mxfp4", "MXFP4"


def _dim(label: str | object, low: int = 1, high: int = 1_000_000) -> list[object]:
    return range_validators(label, low, high)


class ModelSpec(models.Model):
    """The shape of one LLM (as in its config.json) and its computed parameter counts."""

    slug = models.CharField(
        _("slug"),
        max_length=100,
        unique=True,
        validators=[validate_model_slug],
        help_text=_("Lower-case letters, digits, '.', '_' and '-', e.g. qwen2.5-7b."),
    )
    name = models.CharField(_("name"), max_length=150)
    family = models.CharField(_("family"), max_length=60, blank=True)
    hf_repo = models.CharField(_("Hugging Face repository"), max_length=200, blank=True)
    model_type = models.CharField(
        _("model type"), max_length=60, help_text=_("config.json model_type, e.g. llama, qwen3.")
    )

    total_params = models.BigIntegerField(_("total parameters"), default=0, editable=False)
    active_params = models.BigIntegerField(
        _("active parameters per token"), default=0, editable=False
    )
    published_total_params = models.BigIntegerField(
        _("published total parameters"), null=True, blank=True
    )

    num_layers = models.PositiveIntegerField(_("layers"), validators=_dim(_("Layers"), 1, 1000))
    hidden_size = models.PositiveIntegerField(_("hidden size"), validators=_dim(_("Hidden size")))
    num_attention_heads = models.PositiveIntegerField(
        _("attention heads"), validators=_dim(_("Attention heads"), 1, 4096)
    )
    num_kv_heads = models.PositiveIntegerField(
        _("KV heads"), validators=_dim(_("KV heads"), 1, 4096)
    )
    head_dim = models.PositiveIntegerField(
        _("head dimension"),
        validators=_dim(_("Head dimension"), 1, 4096),
        help_text=_("Explicit: Qwen3 uses 128 whatever hidden size ÷ heads is."),
    )
    intermediate_size = models.PositiveIntegerField(
        _("intermediate size"), validators=_dim(_("Intermediate size"), 0)
    )
    vocab_size = models.PositiveIntegerField(
        _("vocabulary size"), validators=_dim(_("Vocabulary size"))
    )
    max_position_embeddings = models.PositiveIntegerField(
        _("max position embeddings"),
        validators=_dim(_("Max position embeddings"), 1, 100_000_000),
    )
    tie_word_embeddings = models.BooleanField(_("tied embeddings"), default=False)
    attention_bias = models.BooleanField(_("attention QKV bias"), default=False)
    qk_norm = models.BooleanField(_("per-head QK norm"), default=False)

    num_experts = models.PositiveIntegerField(
        _("routed experts"),
        default=0,
        validators=_dim(_("Routed experts"), 0, 4096),
        help_text=_("0 for a dense model."),
    )
    experts_per_token = models.PositiveIntegerField(
        _("experts per token"), default=0, validators=_dim(_("Experts per token"), 0, 4096)
    )
    moe_intermediate_size = models.PositiveIntegerField(
        _("expert intermediate size"), default=0, validators=_dim(_("Expert intermediate size"), 0)
    )
    num_shared_experts = models.PositiveIntegerField(
        _("shared experts"), default=0, validators=_dim(_("Shared experts"), 0, 4096)
    )
    num_dense_layers = models.PositiveIntegerField(
        _("dense layers before MoE"), default=0, validators=_dim(_("Dense layers"), 0, 1000)
    )
    router_bias = models.BooleanField(_("router bias"), default=False)

    kv_lora_rank = models.PositiveIntegerField(
        _("MLA kv_lora_rank"),
        default=0,
        validators=_dim(_("MLA kv_lora_rank"), 0, 65536),
        help_text=_("0 unless the model uses multi-head latent attention (DeepSeek-V3)."),
    )
    q_lora_rank = models.PositiveIntegerField(
        _("MLA q_lora_rank"), default=0, validators=_dim(_("MLA q_lora_rank"), 0, 65536)
    )
    qk_rope_head_dim = models.PositiveIntegerField(
        _("MLA qk_rope_head_dim"), default=0, validators=_dim(_("MLA qk_rope_head_dim"), 0, 4096)
    )
    qk_nope_head_dim = models.PositiveIntegerField(
        _("MLA qk_nope_head_dim"), default=0, validators=_dim(_("MLA qk_nope_head_dim"), 0, 4096)
    )
    v_head_dim = models.PositiveIntegerField(
        _("MLA v_head_dim"), default=0, validators=_dim(_("MLA v_head_dim"), 0, 4096)
    )
    num_mtp_layers = models.PositiveIntegerField(
        _("MTP layers (not served)"), default=0, validators=_dim(_("MTP layers"), 0, 100)
    )

    default_dtype = models.CharField(
        _("default dtype"), max_length=10, choices=Dtype, default=Dtype.BF16
    )
    checkpoint_quantization = models.CharField(
        _("checkpoint quantization"),
        max_length=10,
        choices=CheckpointQuantization,
        default=CheckpointQuantization.NONE,
        blank=True,
        help_text=_("Set when the checkpoint is pre-quantized (e.g. DeepSeek-V3 ships FP8)."),
    )
    source = models.CharField(_("source"), max_length=300, blank=True)
    config_json = models.JSONField(
        _("original config.json"), default=dict, blank=True, editable=False
    )
    user_modified = models.BooleanField(
        _("edited by a user"),
        default=False,
        help_text=_("load_catalog leaves rows edited by a user alone."),
    )
    notes = models.TextField(_("notes"), blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    history = HistoricalRecords(excluded_fields=["config_json"])

    class Meta:
        ordering = ["family", "name"]
        verbose_name = _("model spec")
        verbose_name_plural = _("model specs")
        constraints = [
            models.CheckConstraint(
                condition=Q(num_attention_heads__gte=1, num_kv_heads__gte=1)
                & Exact(Mod(F("num_attention_heads"), F("num_kv_heads")), 0),
                name="modelspec_heads_divisible_by_kv_heads",
                violation_error_message=_("KV heads must divide the attention heads evenly."),
            ),
            models.CheckConstraint(
                condition=Q(experts_per_token__lte=F("num_experts")),
                name="modelspec_experts_per_token_lte_experts",
                violation_error_message=_("Experts per token must be between 0 and the experts."),
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("inventory:modelspec-detail", kwargs={"pk": self.pk})

    def clean(self) -> None:
        errors: dict[str, object] = {}
        heads, kv = self.num_attention_heads, self.num_kv_heads
        if heads and kv and heads % kv != 0:
            errors["num_kv_heads"] = _(
                "KV heads (%(kv)s) must divide the attention heads (%(heads)s) evenly: "
                "allowed values are the divisors of %(heads)s."
            ) % {"kv": kv, "heads": heads}
        if kv and heads and kv > heads:
            errors["num_kv_heads"] = _(
                "KV heads must be between 1 and the attention heads (%(heads)s)."
            ) % {"heads": heads}
        if self.num_experts:
            if not 1 <= self.experts_per_token <= self.num_experts:
                errors["experts_per_token"] = _(
                    "Experts per token must be between 1 and the routed experts (%(n)s)."
                ) % {"n": self.num_experts}
            if not self.moe_intermediate_size:
                errors["moe_intermediate_size"] = _(
                    "Expert intermediate size must be at least 1 for a mixture-of-experts model."
                )
            if self.num_layers is not None and self.num_dense_layers >= self.num_layers:
                errors["num_dense_layers"] = _(
                    "Dense layers must be between 0 and the layers minus one (%(max)s)."
                ) % {"max": self.num_layers - 1}
        elif self.experts_per_token:
            errors["experts_per_token"] = _("Experts per token must be 0 for a dense model.")
        if self.hf_repo and not identifiers.is_model_ref(self.hf_repo):
            # It becomes the model argument of every generated `vllm serve` line.
            errors["hf_repo"] = _(
                "Repository %(value)s must be a Hugging Face id (owner/name: letters, digits, "
                "'.', '_', '-') or an absolute path such as /models/my-model."
            ) % {"value": repr(self.hf_repo)}
        if self.kv_lora_rank and not self.qk_rope_head_dim:
            errors["qk_rope_head_dim"] = _(
                "MLA qk_rope_head_dim must be at least 1 when kv_lora_rank is set."
            )
        if errors:
            raise ValidationError(errors)

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0
