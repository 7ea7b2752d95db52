"""Validating uploaded rows for the preview, row by row, and applying them all-or-nothing."""

from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from inventory import services
from inventory.bulk.files import CSV_COLUMNS, NIC_KEYS
from inventory.forms import MachineForm
from inventory.models import (
    MACHINE_FIELDS,
    GpuType,
    Machine,
    NetworkInterface,
    Pool,
    PoolKind,
)

# Parsing -----------------------------------------------------------------------------------


# Validation --------------------------------------------------------------------------------


class _RowForm(MachineForm):
    """MachineForm for one imported row: GPU type by slug, pool by name, no per-row queries."""

    def __init__(self, *args: Any, gpu_types: dict[str, GpuType], pools: dict[str, Pool], **kw):
        super().__init__(*args, **kw)
        self.gpu_types, self.pools = gpu_types, pools
        from django import forms

        self.fields["gpu_type"] = forms.CharField(label=_("GPU type"))
        self.fields["pool"] = forms.CharField(label=_("Pool"), required=False)

    def clean_gpu_type(self) -> GpuType:
        slug = self.cleaned_data["gpu_type"].strip()
        if slug not in self.gpu_types:
            raise ValidationError(
                _("Unknown GPU type %(slug)s; use a slug from the GPU types list, e.g. %(known)s.")
                % {"slug": repr(slug), "known": ", ".join(sorted(self.gpu_types)[:6])}
            )
        return self.gpu_types[slug]

    def clean_pool(self) -> Pool | None:
        name = (self.cleaned_data.get("pool") or "").strip()
        if not name:
            return None
        return self.pools.get(name) or Pool(name=name, kind=PoolKind.DEDICATED)

    def _get_validation_exclusions(self) -> set[str]:
        # The GPU type and pool come from the preloaded dicts: no existence query per row.
        return {*super()._get_validation_exclusions(), "gpu_type", "pool"}

    # Uniqueness is checked against a preloaded set of host names, once for the whole file.
    def validate_unique(self) -> None:
        return None

    def validate_constraints(self) -> None:
        return None


@dataclass(slots=True, kw_only=True)
class RowResult:
    number: int
    data: dict[str, Any]
    action: str = "create"
    errors: dict[str, list[str]] = field(default_factory=dict)
    cleaned: dict[str, Any] = field(default_factory=dict)
    nics: list[dict[str, Any]] = field(default_factory=list)
    new_pool: str = ""

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def error_fields(self) -> list[str]:
        return list(self.errors)


@dataclass(slots=True, kw_only=True)
class ImportPreview:
    rows: list[RowResult]

    @property
    def ok(self) -> bool:
        return all(row.ok for row in self.rows)

    @property
    def error_count(self) -> int:
        return sum(len(messages) for row in self.rows for messages in row.errors.values())

    @property
    def bad_rows(self) -> int:
        return sum(1 for row in self.rows if not row.ok)

    @property
    def new_pools(self) -> list[str]:
        return sorted({row.new_pool for row in self.rows if row.new_pool})


def _validate_nics(raw: Any, result: RowResult) -> None:
    if raw in (None, ""):
        raw = []
    if not isinstance(raw, list):
        result.errors.setdefault("nics", []).append(
            _("nics must be a list of interfaces (name, speed_gbps, kind, role).")
        )
        return
    seen: set[str] = set()
    for index, nic in enumerate(raw, start=1):
        if not isinstance(nic, dict):
            result.errors.setdefault("nics", []).append(
                _("Interface %(n)s must be a mapping of name, speed_gbps, kind, role.")
                % {"n": index}
            )
            continue
        if nic.get("_extra"):
            result.errors.setdefault("nics", []).append(
                _("Interface %(n)s: unexpected %(extra)s (format: name speed_gbps kind role).")
                % {"n": index, "extra": repr(nic["_extra"])}
            )
            continue
        data = {"kind": "ethernet", "role": "data", **{k: nic.get(k) for k in NIC_KEYS if k in nic}}
        # Model field validation only (a form per NIC costs more than the whole row).
        instance = NetworkInterface(**{k: "" if v is None else v for k, v in data.items()})
        try:
            instance.clean_fields(exclude=["machine"])
        except ValidationError as exc:
            for name, messages in exc.message_dict.items():
                for message in messages:
                    result.errors.setdefault("nics", []).append(
                        _("Interface %(n)s (%(name)s) %(field)s: %(message)s")
                        % {
                            "n": index,
                            "name": nic.get("name") or "?",
                            "field": name,
                            "message": message,
                        }
                    )
            continue
        cleaned = {k: getattr(instance, k) for k in NIC_KEYS}
        name = cleaned["name"]
        if name in seen:
            result.errors.setdefault("nics", []).append(
                _("Interface %(n)s: the name %(name)s is used twice on this machine.")
                % {"n": index, "name": name}
            )
        seen.add(name)
        result.nics.append(cleaned)


def validate_rows(rows: list[dict[str, Any]], *, update_existing: bool) -> ImportPreview:
    """Validate every row; return per-row, per-field errors (nothing is written)."""
    gpu_types = {g.slug: g for g in GpuType.objects.all()}
    pools = {p.name: p for p in Pool.objects.all()}
    existing = {m.hostname: m for m in Machine.objects.select_related("gpu_type", "pool")}
    seen_hosts: dict[str, int] = {}
    results = []
    for number, row in enumerate(rows, start=1):
        result = RowResult(number=number, data=row)
        results.append(result)
        if row.get("_error"):
            result.errors["__all__"] = [str(row["_error"])]
            continue
        unknown = sorted(set(row) - set(CSV_COLUMNS))
        if unknown:
            result.errors["__all__"] = [
                _("Unknown fields: %(unknown)s.") % {"unknown": ", ".join(unknown)}
            ]
        data = {k: row.get(k, "") for k in MACHINE_FIELDS}
        if not data.get("status"):
            data["status"] = "active"
        hostname = str(data.get("hostname") or "").strip().lower()
        instance = existing.get(hostname) if update_existing else None
        form = _RowForm(data=data, instance=instance, gpu_types=gpu_types, pools=pools)
        if not form.is_valid():
            for name, messages in form.errors.items():
                result.errors.setdefault(name, []).extend(messages)
        else:
            result.cleaned = form.cleaned_data
            pool = form.cleaned_data.get("pool")
            if pool is not None and pool.pk is None:
                result.new_pool = pool.name
        if hostname:
            if hostname in seen_hosts:
                result.errors.setdefault("hostname", []).append(
                    _("Duplicate hostname %(host)s: also on row %(row)s of this file.")
                    % {"host": hostname, "row": seen_hosts[hostname]}
                )
            else:
                seen_hosts[hostname] = number
            if hostname in existing:
                if update_existing:
                    result.action = "update"
                else:
                    result.errors.setdefault("hostname", []).append(
                        _(
                            "A machine with hostname %(host)s already exists (tick "
                            "'update existing machines' to change it)."
                        )
                        % {"host": hostname}
                    )
        _validate_nics(row.get("nics"), result)
    return ImportPreview(rows=results)


# Applying ----------------------------------------------------------------------------------


@transaction.atomic
def apply_rows(
    rows: list[dict[str, Any]], *, update_existing: bool, actor: Any | None = None
) -> ImportPreview:
    """Validate again and write every row, or nothing: raise ValidationError on any bad row."""
    preview = validate_rows(rows, update_existing=update_existing)
    if not preview.ok:
        raise ValidationError(
            _("%(rows)s of %(total)s rows have errors; nothing was imported.")
            % {"rows": preview.bad_rows, "total": len(preview.rows)}
        )
    pools: dict[str, Pool] = {}
    existing = {m.hostname: m for m in Machine.objects.select_for_update()}
    to_create = []
    for row in preview.rows:
        fields = dict(row.cleaned)
        pool = fields.get("pool")
        if pool is not None and pool.pk is None:
            if pool.name not in pools:
                pools[pool.name] = services.pool_create(
                    actor=actor, name=pool.name, kind=PoolKind.DEDICATED
                )
            fields["pool"] = pools[pool.name]
        machine = existing.get(fields["hostname"])
        if machine is not None:
            services.machine_update(machine=machine, actor=actor, nics=row.nics, **fields)
        else:
            to_create.append((fields, row.nics))
    try:
        with transaction.atomic():
            services.machines_bulk_create(machines=to_create, actor=actor)
    except IntegrityError as exc:
        # Someone wrote a clashing machine between the check above and the insert.
        raise ValidationError(
            _("The inventory changed during the import (%(error)s); nothing was imported.")
            % {"error": exc}
        ) from exc
    return preview


# Export ------------------------------------------------------------------------------------
