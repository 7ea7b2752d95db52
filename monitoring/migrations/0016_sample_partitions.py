"""Raw samples: no index on the target alone, and hourly partitions on PostgreSQL.

The target's own index repeated the first column of the sample key, which serves every read by
target (EXPLAIN ANALYZE on a filled table: no plan used it). On PostgreSQL the table becomes
range-partitioned on `ts` by the hour, with a default partition, so that retention drops whole
hours instead of deleting rows (monitoring/partitioning.py); the rows present are copied into
it once. SQLite keeps the plain table.
"""

from datetime import timedelta

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.utils import timezone

TABLE = "monitoring_sample"
NEW = "monitoring_sample_partitioned"


def partition_samples(apps, schema_editor):
    conn = schema_editor.connection
    if conn.vendor != "postgresql":
        return
    from monitoring import partitioning, retention

    with conn.cursor() as cursor:
        cursor.execute(f"SELECT MIN(ts), COALESCE(MAX(id), 0) FROM {TABLE}")
        oldest, last_id = cursor.fetchone()
        cursor.execute(
            f"CREATE TABLE {NEW} (id bigint NOT NULL, target_id bigint NOT NULL,"
            " series varchar(100) NOT NULL, labels varchar(400) NOT NULL,"
            " ts timestamp with time zone NOT NULL, value double precision NOT NULL)"
            " PARTITION BY RANGE (ts)"
        )
        cursor.execute(f"CREATE TABLE {partitioning.DEFAULT_PARTITION} PARTITION OF {NEW} DEFAULT")
        # The hours of the rows present within the raw retention get their partitions (older
        # rows go to the default one), then the current hour and the coming ones.
        now = timezone.now()
        start = now
        if oldest is not None:
            start = min(now, max(oldest, now - timedelta(hours=settings.MONITORING_RAW_RETENTION_H)))
        ahead = now + timedelta(hours=settings.MONITORING_SAMPLE_PARTITIONS_AHEAD_H)
        for partition in partitioning.to_create(set(), start, ahead):
            bounds = [conn.ops.adapt_datetimefield_value(t) for t in (partition.start, partition.end)]
            cursor.execute(
                f"CREATE TABLE {partition.name} PARTITION OF {NEW} FOR VALUES FROM (%s) TO (%s)",
                bounds,
            )
        cursor.execute(
            f"INSERT INTO {NEW} (id, target_id, series, labels, ts, value)"
            f" SELECT id, target_id, series, labels, ts, value FROM {TABLE}"
        )
        cursor.execute(f"DROP TABLE {TABLE}")
        cursor.execute(f"ALTER TABLE {NEW} RENAME TO {TABLE}")
        cursor.execute(f"CREATE SEQUENCE {TABLE}_id_seq OWNED BY {TABLE}.id")
        cursor.execute(f"SELECT setval('{TABLE}_id_seq', %s, true)", [max(last_id, 1)])
        cursor.execute(f"ALTER TABLE {TABLE} ALTER COLUMN id SET DEFAULT nextval('{TABLE}_id_seq')")
        # A partitioned table's unique keys must hold the partition column.
        cursor.execute(f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_pkey PRIMARY KEY (id, ts)")
        cursor.execute(
            f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_key UNIQUE (target_id, series, ts, labels)"
        )
        cursor.execute(f"CREATE INDEX {TABLE}_ts ON {TABLE} (ts)")
        cursor.execute(
            f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_target_id_fk_monitoring_target_id"
            " FOREIGN KEY (target_id) REFERENCES monitoring_target (id)"
            " DEFERRABLE INITIALLY DEFERRED"
        )
    assert retention.samples_partitioned(conn)


class Migration(migrations.Migration):
    dependencies = [
        ("monitoring", "0015_spooled_writes"),
    ]

    operations = [
        migrations.AlterField(
            model_name="sample",
            name="target",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="samples",
                to="monitoring.target",
            ),
        ),
        # Not reversed: the partitioned table serves the earlier models unchanged.
        migrations.RunPython(partition_samples, migrations.RunPython.noop, elidable=False),
    ]
