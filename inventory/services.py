"""Every write to the inventory goes through these functions.

Forms, the API, admin actions, imports and management commands call them. Each one validates
with full_clean() before saving, records the acting user in the history, and runs in a
transaction so nothing is half-written.
"""

import contextlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.utils.text import slugify
from django.utils.translation import gettext as _

from catalog import ArchitectureError, from_hf_config
from core import json_input
from inventory.architecture import architecture_values, parameter_counts
from inventory.models import GpuType, Machine, MachineStatus, ModelSpec, NetworkInterface, Pool
from inventory.selectors import object_usages


class InUseError(Exception):
    """Refusal to delete a row that other rows still use; `usages` names each of them."""

    def __init__(self, obj: models.Model, usages: list[str]) -> None:
        self.obj = obj
        self.usages = usages
        super().__init__(
            _("%(object)s is in use and cannot be deleted; used by: %(usages)s")
            % {"object": obj, "usages": ", ".join(usages)}
        )


def _assign[M: models.Model](obj: M, fields: Mapping[str, Any]) -> M:
    names = {f.name for f in obj._meta.get_fields()} | {
        f.attname for f in obj._meta.concrete_fields
    }
    for name, value in fields.items():
        if name not in names:
            raise TypeError(f"{type(obj).__name__} has no field {name!r}")
        setattr(obj, name, value)
    return obj


def _save[M: models.Model](obj: M, *, actor: Any | None, exclude: list[str] | None = None) -> M:
    """Validate and save `obj`, recording `actor` in its history."""
    obj.full_clean(exclude=exclude)
    if actor is not None and getattr(actor, "is_authenticated", False):
        obj._history_user = actor  # type: ignore[attr-defined]
    obj.save()
    return obj


def _delete(obj: models.Model, *, actor: Any | None) -> None:
    usages = object_usages(obj)
    if usages:
        raise InUseError(obj, usages)
    if actor is not None and getattr(actor, "is_authenticated", False):
        obj._history_user = actor  # type: ignore[attr-defined]
    obj.delete()


# GPU types ---------------------------------------------------------------------------------


@transaction.atomic
def gpu_type_create(*, actor: Any | None = None, **fields: Any) -> GpuType:
    """Create a GPU type; a user's row is never overwritten by load_catalog."""
    return _save(_assign(GpuType(user_modified=True), fields), actor=actor)


@transaction.atomic
def gpu_type_update(
    *, gpu_type: GpuType, actor: Any | None = None, mark_user_modified: bool = True, **fields: Any
) -> GpuType:
    """Change a GPU type; a user's edit protects the row from load_catalog."""
    _assign(gpu_type, fields)
    if mark_user_modified:
        gpu_type.user_modified = True
    return _save(gpu_type, actor=actor)


@transaction.atomic
def gpu_type_delete(*, gpu_type: GpuType, actor: Any | None = None) -> None:
    """Delete a GPU type no machine uses; raise InUseError naming the machines otherwise."""
    _delete(gpu_type, actor=actor)


# Pools -------------------------------------------------------------------------------------


@transaction.atomic
def pool_create(*, actor: Any | None = None, **fields: Any) -> Pool:
    """Create a pool."""
    return _save(_assign(Pool(), fields), actor=actor)


@transaction.atomic
def pool_update(*, pool: Pool, actor: Any | None = None, **fields: Any) -> Pool:
    """Change a pool."""
    return _save(_assign(pool, fields), actor=actor)


@transaction.atomic
def pool_delete(*, pool: Pool, actor: Any | None = None) -> None:
    """Delete a pool; its machines stay, without a pool (recorded in their history)."""
    for machine in pool.machines.all():
        machine.pool = None
        _save(machine, actor=actor)
    _delete(pool, actor=actor)


# Machines and NICs -------------------------------------------------------------------------


def _nic_error(index: int, nic: Mapping[str, Any], error: ValidationError) -> ValidationError:
    parts = []
    for field, messages in error.message_dict.items():
        label = "" if field == "__all__" else f"{field}: "
        parts.extend(f"{label}{message}" for message in messages)
    return ValidationError(
        {
            "nics": _("Interface %(n)s (%(name)s): %(errors)s")
            % {"n": index + 1, "name": nic.get("name") or "?", "errors": "; ".join(parts)}
        }
    )


def _replace_nics(machine: Machine, nics: Iterable[Mapping[str, Any]], actor: Any | None) -> None:
    """Make the machine's interfaces exactly `nics`, matched by name (history stays readable)."""
    existing = {nic.name: nic for nic in machine.nics.all()}
    wanted: dict[str, tuple[int, Mapping[str, Any]]] = {}
    for index, data in enumerate(nics):
        name = str(data.get("name") or "")
        if name in wanted:
            raise ValidationError(
                {
                    "nics": _("Interface %(n)s: the name %(name)s is used twice on this machine.")
                    % {"n": index + 1, "name": name}
                }
            )
        wanted[name] = (index, data)
    for name, nic in existing.items():
        if name not in wanted:
            _delete(nic, actor=actor)
    for name, (index, data) in wanted.items():
        fields = {k: v for k, v in data.items() if k not in {"id", "machine"}}
        nic = existing.get(name) or NetworkInterface(machine=machine)
        before = {k: getattr(nic, k) for k in fields} if nic.pk else None
        _assign(nic, fields)
        if before is not None and all(before[k] == getattr(nic, k) for k in fields):
            continue  # unchanged: no save, no history row
        try:
            _save(nic, actor=actor)
        except ValidationError as exc:
            raise _nic_error(index, data, exc) from exc


@transaction.atomic
def machine_create(
    *, actor: Any | None = None, nics: Iterable[Mapping[str, Any]] = (), **fields: Any
) -> Machine:
    """Create a machine with its network interfaces."""
    machine = _save(_assign(Machine(), fields), actor=actor)
    _replace_nics(machine, nics, actor)
    return machine


@transaction.atomic
def machine_update(
    *,
    machine: Machine,
    actor: Any | None = None,
    nics: Iterable[Mapping[str, Any]] | None = None,
    **fields: Any,
) -> Machine:
    """Change a machine; when `nics` is given it replaces every interface of the machine."""
    _save(_assign(machine, fields), actor=actor)
    if nics is not None:
        _replace_nics(machine, nics, actor)
    return machine


@transaction.atomic
def machines_bulk_create(
    *,
    machines: Iterable[tuple[Mapping[str, Any], Iterable[Mapping[str, Any]]]],
    actor: Any | None = None,
) -> list[Machine]:
    """Create many machines with their NICs in a handful of queries (the bulk import path).

    Every field validator runs on every machine and NIC. Host-name uniqueness and the GPU
    type / pool references must have been checked by the caller over the whole batch
    (inventory.bulk.validate_rows does, with one query each); the database constraints
    still hold, so a race ends in IntegrityError and the transaction writes nothing.
    """
    from simple_history.utils import bulk_create_with_history

    user = actor if getattr(actor, "is_authenticated", False) else None
    rows = [(_assign(Machine(), fields), list(nics)) for fields, nics in machines]
    for machine, _unused in rows:
        machine.full_clean(
            exclude=["gpu_type", "pool"], validate_unique=False, validate_constraints=False
        )
    created = bulk_create_with_history([row[0] for row in rows], Machine, default_user=user)
    interfaces = []
    for machine, (_unused, nics) in zip(created, rows, strict=True):
        for index, data in enumerate(nics):
            nic = _assign(NetworkInterface(machine=machine), data)
            try:
                nic.full_clean(
                    exclude=["machine"], validate_unique=False, validate_constraints=False
                )
            except ValidationError as exc:
                raise _nic_error(index, data, exc) from exc
            interfaces.append(nic)
    bulk_create_with_history(interfaces, NetworkInterface, default_user=user)
    return created


@transaction.atomic
def machine_delete(*, machine: Machine, actor: Any | None = None) -> None:
    """Delete a machine and its interfaces."""
    _delete(machine, actor=actor)


@transaction.atomic
def machines_set_status(
    *, machines: Iterable[Machine], status: MachineStatus | str, actor: Any | None = None
) -> int:
    """Set the status of several machines; return how many changed."""
    changed = 0
    for machine in machines:
        if machine.status != status:
            machine.status = status
            _save(machine, actor=actor)
            changed += 1
    return changed


@transaction.atomic
def nic_create(*, machine: Machine, actor: Any | None = None, **fields: Any) -> NetworkInterface:
    """Add a network interface to a machine."""
    return _save(_assign(NetworkInterface(machine=machine), fields), actor=actor)


@transaction.atomic
def nic_update(
    *, nic: NetworkInterface, actor: Any | None = None, **fields: Any
) -> NetworkInterface:
    """Change a network interface."""
    return _save(_assign(nic, fields), actor=actor)


@transaction.atomic
def nic_delete(*, nic: NetworkInterface, actor: Any | None = None) -> None:
    """Remove a network interface."""
    _delete(nic, actor=actor)


# Model specs -------------------------------------------------------------------------------


def _with_parameter_counts(spec: ModelSpec) -> ModelSpec:
    """Fill total/active parameters from the architecture fields."""
    # An invalid field leaves the counts alone; full_clean() names it before anything is saved.
    with contextlib.suppress(TypeError, ValueError):
        spec.total_params, spec.active_params = parameter_counts(spec)
    return spec


@transaction.atomic
def model_spec_create(*, actor: Any | None = None, **fields: Any) -> ModelSpec:
    """Create a model spec (parameters computed); load_catalog never overwrites it."""
    spec = _assign(ModelSpec(user_modified=True), fields)
    if not spec.slug and spec.name:
        spec.slug = model_slugify(spec.name)
    return _save(_with_parameter_counts(spec), actor=actor)


@transaction.atomic
def model_spec_update(
    *,
    model_spec: ModelSpec,
    actor: Any | None = None,
    mark_user_modified: bool = True,
    **fields: Any,
) -> ModelSpec:
    """Change a model spec and recompute its parameters; a user's edit survives load_catalog."""
    _assign(model_spec, fields)
    if mark_user_modified:
        model_spec.user_modified = True
    return _save(_with_parameter_counts(model_spec), actor=actor)


@transaction.atomic
def model_spec_delete(*, model_spec: ModelSpec, actor: Any | None = None) -> None:
    """Delete a model spec nothing uses; raise InUseError naming the users otherwise."""
    _delete(model_spec, actor=actor)


def model_slugify(name: str) -> str:
    """Return a model slug for `name` that keeps dots ("Qwen2.5-7B" -> "qwen2.5-7b")."""
    return ".".join(slugify(part) for part in name.split(".")).strip(".-")[:100]


def parse_config_json(text: str | bytes) -> dict[str, Any]:
    """Return the config.json object in `text`; raise ValidationError on the field `config`."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValidationError(
                {"config": _("config.json is not valid JSON: the file is not UTF-8 text.")}
            ) from None
    try:
        config = json_input.loads(text)
    except json_input.JsonInputError as exc:
        where = f" ({exc.path})" if exc.path else ""
        raise ValidationError(
            {
                "config": _("config.json is refused%(where)s: %(error)s.")
                % {"where": where, "error": exc}
            }
        ) from None
    except json.JSONDecodeError as exc:
        raise ValidationError(
            {
                "config": _(
                    "config.json is not valid JSON: %(error)s (line %(line)s, column %(col)s)."
                )
                % {"error": exc.msg, "line": exc.lineno, "col": exc.colno}
            }
        ) from None
    if not isinstance(config, dict):
        raise ValidationError({"config": _("config.json must be a JSON object ({...}).")})
    return config


def architecture_from_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Return ModelSpec architecture values from a config.json; errors list what is missing."""
    nul_at = json_input.nul_paths(config)
    if nul_at:
        raise ValidationError(
            {
                "config": _("config.json must not contain NUL characters (found in %(keys)s).")
                % {"keys": ", ".join(nul_at[:5])}
            }
        )
    try:
        arch = from_hf_config(config)
    except ArchitectureError as exc:
        if exc.missing:
            message = _(
                "This config.json (model_type %(type)s) cannot be imported: it is missing "
                "%(missing)s."
            ) % {"type": repr(config.get("model_type", "")), "missing": ", ".join(exc.missing)}
        else:
            message = _("This config.json cannot be imported: %(errors)s.") % {
                "errors": "; ".join(f"{k}: {v}" for k, v in exc.errors.items())
            }
        raise ValidationError({"config": message}) from None
    return architecture_values(arch)


@transaction.atomic
def model_spec_import_config(
    *,
    config: Mapping[str, Any] | str | bytes,
    name: str,
    slug: str = "",
    family: str = "",
    hf_repo: str = "",
    source: str = "",
    actor: Any | None = None,
) -> ModelSpec:
    """Create a model spec from a Hugging Face config.json (a dict, or its text)."""
    if not isinstance(config, Mapping):
        config = parse_config_json(config)
    values = architecture_from_config(config)
    return model_spec_create(
        actor=actor,
        name=name,
        slug=slug or model_slugify(name),
        family=family or str(config.get("model_type", "")),
        hf_repo=hf_repo,
        source=source or _("imported config.json"),
        config_json=dict(config),
        **values,
    )


# Catalog -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogLoadResult:
    created: int
    updated: int
    unchanged: int
    kept_user_edits: int


def _upsert[M: models.Model](
    model: type[M], slug: str, values: dict[str, Any], counts: dict[str, int]
) -> None:
    row = model.objects.filter(slug=slug).first()  # type: ignore[attr-defined]
    if row is None:
        row = model(slug=slug, **values)
        if isinstance(row, ModelSpec):
            _with_parameter_counts(row)
        _save(row, actor=None)
        counts["created"] += 1
        return
    if row.user_modified:
        counts["kept_user_edits"] += 1
        return
    if all(getattr(row, k) == v for k, v in values.items()):
        counts["unchanged"] += 1
        return
    _assign(row, values)
    if isinstance(row, ModelSpec):
        _with_parameter_counts(row)
    _save(row, actor=None)
    counts["updated"] += 1


@transaction.atomic
def catalog_load() -> dict[str, CatalogLoadResult]:
    """Load the shipped GPU types and model specs; rows edited by a user are left alone."""
    from catalog.data import load_gpus, load_models

    results = {}
    counts = dict.fromkeys(("created", "updated", "unchanged", "kept_user_edits"), 0)
    for gpu in load_gpus().values():
        values = {
            "name": gpu.name,
            "vendor": gpu.vendor,
            "memory_gib": gpu.memory_gib,
            "driver_visible_gib": gpu.driver_visible_gib,
            "hbm_bandwidth_gbs": gpu.hbm_bandwidth_gbs,
            "bf16_dense_tflops": gpu.bf16_dense_tflops,
            "fp8_support": gpu.fp8_support,
            "nvlink_bandwidth_gbs": gpu.nvlink_gbs,
            "form_factor": gpu.form_factor,
            "source": gpu.source,
        }
        _upsert(GpuType, gpu.slug, values, counts)
    results["gpu_types"] = CatalogLoadResult(**counts)

    counts = dict.fromkeys(counts, 0)
    for entry in load_models().values():
        values = {
            "name": entry.name,
            "family": entry.family,
            "hf_repo": entry.hf_repo,
            "source": entry.source,
            "published_total_params": entry.published_total_params,
            "config_json": entry.config,
            **architecture_values(entry.architecture),
        }
        _upsert(ModelSpec, entry.slug, values, counts)
    results["model_specs"] = CatalogLoadResult(**counts)
    return results


# Admin -------------------------------------------------------------------------------------


@transaction.atomic
def object_save(*, obj: models.Model, actor: Any | None = None, user_edit: bool = False) -> Any:
    """Validate and save an object edited as a whole (Django admin).

    A user's edit of a catalog row (GPU type, model spec) protects it from load_catalog; a
    model spec's parameter counts are recomputed.
    """
    if user_edit and hasattr(obj, "user_modified") and obj.pk:
        obj.user_modified = True
    if isinstance(obj, ModelSpec):
        _with_parameter_counts(obj)
    return _save(obj, actor=actor)


@transaction.atomic
def object_delete(*, obj: models.Model, actor: Any | None = None) -> None:
    """Delete an object nothing uses; raise InUseError naming the users otherwise."""
    if isinstance(obj, Pool):
        pool_delete(pool=obj, actor=actor)
    else:
        _delete(obj, actor=actor)
