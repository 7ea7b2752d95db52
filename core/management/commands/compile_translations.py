"""Compile the .po catalogs under locale/ into .mo files without GNU gettext."""

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from core.i18n_compile import compile_po


class Command(BaseCommand):
    help = "Compile locale/*/LC_MESSAGES/*.po to .mo (pure Python; no msgfmt needed)."

    def handle(self, *args: Any, **options: Any) -> None:
        compiled = 0
        for locale_dir in settings.LOCALE_PATHS:
            for po_path in sorted(Path(locale_dir).glob("*/LC_MESSAGES/*.po")):
                mo_path = po_path.with_suffix(".mo")
                if mo_path.exists() and mo_path.stat().st_mtime >= po_path.stat().st_mtime:
                    continue
                compile_po(po_path, mo_path)
                compiled += 1
        self.stdout.write(f"Compiled {compiled} catalog(s).")
