"""Turn a gettext .po catalog into a .mo file with polib (fuzzy entries are left out)."""

from pathlib import Path

import polib


def compile_po(po_path: Path, mo_path: Path) -> None:
    """Write `mo_path` from `po_path`, skipping fuzzy and obsolete entries like msgfmt does."""
    catalog = polib.pofile(str(po_path))
    for entry in list(catalog):
        if entry.fuzzy or entry.obsolete:
            catalog.remove(entry)
    catalog.save_as_mofile(str(mo_path))
