"""Poll one target now and store the result exactly as the worker would (alerts included)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from monitoring.models import Target
from monitoring.tasks import poll_now


class Command(BaseCommand):
    help = (
        "Poll one target by name now and store the samples, the error or the alert events, "
        "exactly as the worker does (without waiting for the scheduler). Disabled targets are "
        "polled too: this is how an operator debugs one by hand."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the target's name")

    def handle(self, *args: Any, **options: Any) -> None:
        name: str = options["name"]
        target = Target.objects.defer("token").filter(name=name).first()
        if target is None:
            known = ", ".join(Target.objects.order_by("name").values_list("name", flat=True)[:20])
            raise CommandError(f"no target named {name!r}; targets: {known or 'none'}")
        report = poll_now(target)
        if report.ok:
            self.stdout.write(
                f"{target.name}: up, {report.samples} sample(s) stored at "
                f"{report.ts.isoformat()} in {report.duration_ms:.0f} ms"
                + ("" if report.stored else " (nothing new: this time was already stored)")
            )
            return
        raise CommandError(
            f"{target.name}: poll failed ({report.error_kind}): {report.error} "
            "- stored on the target as the worker would"
        )
