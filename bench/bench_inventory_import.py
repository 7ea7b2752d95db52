"""Time a 200-machine CSV import (parse, preview validation, all-or-nothing apply) and export.

Issue 3: "A user can import a 200-machine CSV in one go." Runs against a throw-away SQLite
database (or DATABASE_URL when set, e.g. PostgreSQL). Prints seconds per phase.
Run: .venv/bin/python bench/bench_inventory_import.py [--machines 200]
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def build_csv(n: int, columns: list[str]) -> bytes:
    gpus = ["a800-80g-sxm", "a100-80g-sxm", "h100-sxm", "l40s", "rtx-4090"]
    counts = {"a800-80g-sxm": 8, "a100-80g-sxm": 4, "h100-sxm": 8, "l40s": 4, "rtx-4090": 1}
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for i in range(n):
        gpu = gpus[i % len(gpus)]
        writer.writerow(
            {
                "hostname": f"bench-{i:04d}",
                "management_address": f"10.{i // 250}.{i % 250}.1",
                "datacenter": f"dc{i % 2 + 1}",
                "rack": f"r{i % 20:02d}",
                "pool": f"pool-{i % 5}",
                "gpu_type": gpu,
                "gpu_count": counts[gpu],
                "interconnect": "pcie" if gpu in {"l40s", "rtx-4090"} else "nvlink",
                "cpu_cores": 64,
                "ram_gib": 512,
                "status": "active",
                "owner_team": "bench",
                "tags": "bench,generated",
                "nics": (
                    "eth1 25 ethernet data; eno1 1 ethernet management; ib0 200 infiniband data"
                ),
            }
        )
    return out.getvalue().encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--machines", type=int, default=200)
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="serveplan-bench-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    os.environ["SERVEPLAN_VAR_DIR"] = tmp
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from inventory import bulk
    from inventory.models import Machine
    from inventory.selectors import machine_queryset
    from inventory.services import catalog_load

    if connection.vendor != "sqlite":
        # Never touch a real database's data: run on a throw-away database of our own.
        connection.settings_dict.setdefault("TEST", {})["NAME"] = "serveplan_bench_inventory"
        connection.creation.create_test_db(verbosity=0, autoclobber=True)
    else:
        call_command("migrate", verbosity=0)
    catalog_load()
    data = build_csv(args.machines, bulk.CSV_COLUMNS)

    t0 = time.perf_counter()
    rows = bulk.parse_file(data, "csv")
    t1 = time.perf_counter()
    preview = bulk.validate_rows(rows, update_existing=False)
    t2 = time.perf_counter()
    assert preview.ok, [r.errors for r in preview.rows if not r.ok][:3]
    bulk.apply_rows(rows, update_existing=False)
    t3 = time.perf_counter()
    exported = bulk.export_csv(machine_queryset())
    t4 = time.perf_counter()
    assert Machine.objects.count() == args.machines

    print(f"database: {connection.vendor}")
    print(f"machines: {args.machines} ({len(data) / 1024:.0f} KiB CSV, 3 NICs each)")
    print(f"parse_s: {t1 - t0:.3f}")
    print(f"preview_validate_s: {t2 - t1:.3f}")
    print(f"apply_s: {t3 - t2:.3f}")
    print(f"total_import_s: {t3 - t0:.3f}")
    print(f"export_csv_s: {t4 - t3:.3f} ({len(exported) / 1024:.0f} KiB)")
    if connection.vendor != "sqlite":
        connection.creation.destroy_test_db(connection.settings_dict["NAME"], verbosity=0)


if __name__ == "__main__":
    main()
