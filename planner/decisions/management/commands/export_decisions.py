"""Write every decision record as an ADR Markdown file, so teams can keep them in git."""

import os
import re
import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils import translation

from planner.decisions.markdown import export_filename, export_markdown
from planner.decisions.selectors import decision_list


def _write_if_changed(path: Path, content: str) -> bool:
    """Write `content` atomically unless the file already holds exactly it; return if written."""
    data = content.encode("utf-8")
    if path.exists() and path.read_bytes() == data:
        return False
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".export-", suffix=".md")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


class Command(BaseCommand):
    help = (
        "Write every decision record to DIR as NNNN-title.md (ADR layout). Re-running rewrites "
        "only files whose content changed, and removes a record's old file when its title "
        "changed."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("directory", help="Target directory (created if missing).")
        parser.add_argument(
            "--language", default="en", help="Language of the headings (default: en)."
        )

    def handle(self, *args: Any, directory: str, language: str, **options: Any) -> None:
        target = Path(directory)
        try:
            target.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CommandError(f"cannot create {target}: {exc}") from exc
        written = unchanged = removed = 0
        with translation.override(language):
            for decision in decision_list().order_by("number"):
                name = export_filename(decision)
                if _write_if_changed(target / name, export_markdown(decision)):
                    written += 1
                    self.stdout.write(f"wrote {name}")
                else:
                    unchanged += 1
                # A renamed record leaves its old file behind; only files of this number go.
                pattern = re.compile(rf"^{decision.number:04d}-.*\.md$")
                for old in target.iterdir():
                    if old.name != name and pattern.match(old.name):
                        old.unlink()
                        removed += 1
                        self.stdout.write(f"removed {old.name}")
        self.stdout.write(
            self.style.SUCCESS(
                f"{written} written, {unchanged} unchanged, {removed} removed in {target}"
            )
        )
