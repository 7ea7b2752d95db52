"""No N+1: list pages and list endpoints run a fixed number of queries however many rows."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.inventory.factories import (
    GpuTypeFactory,
    MachineFactory,
    ModelSpecFactory,
    PoolFactory,
)

pytestmark = pytest.mark.django_db


def build_fleet(machines: int) -> None:
    gpus = [GpuTypeFactory() for _ in range(3)]
    pools = [PoolFactory() for _ in range(3)]
    for i in range(machines):
        MachineFactory(gpu_type=gpus[i % 3], pool=pools[i % 3], tags="a,b")
    for _ in range(machines // 4):
        ModelSpecFactory()


def count_queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries)


PAGES = [
    "/inventory/",
    "/inventory/summary/",
    "/inventory/machines/",
    "/inventory/machines/?ordering=-gpu_count&has_data_nic=true",
    "/inventory/pools/",
    "/inventory/gpu-types/",
    "/inventory/models/",
    "/inventory/machines/export/csv/",
    "/inventory/machines/export/yaml/",
]
ENDPOINTS = [
    "/api/v1/inventory/machines/",
    "/api/v1/inventory/nics/",
    "/api/v1/inventory/pools/",
    "/api/v1/inventory/gpu-types/",
    "/api/v1/inventory/model-specs/",
    "/api/v1/inventory/fleet-summary/",
]

# Upper bounds with many rows: session, user, groups, the page's own few queries.
MAX_PAGE_QUERIES = 14
MAX_API_QUERIES = 8


@pytest.mark.parametrize("url", PAGES)
def test_list_page_query_count_does_not_grow_with_rows(viewer_client, url):
    build_fleet(4)
    few = count_queries(viewer_client, url)
    build_fleet(60)

    many = count_queries(viewer_client, url)

    assert many == few
    assert many <= MAX_PAGE_QUERIES


@pytest.mark.parametrize("url", ENDPOINTS)
def test_list_endpoint_query_count_does_not_grow_with_rows(viewer_api, url):
    build_fleet(4)
    few = count_queries(viewer_api, url)
    build_fleet(60)

    many = count_queries(viewer_api, url)

    assert many == few
    assert many <= MAX_API_QUERIES


def test_machine_list_page_with_many_rows_stays_under_the_bound(
    viewer_client, django_assert_max_num_queries
):
    build_fleet(120)

    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        viewer_client.get("/inventory/machines/")


def test_machine_list_endpoint_with_many_rows_stays_under_the_bound(
    viewer_api, django_assert_max_num_queries
):
    build_fleet(120)

    with django_assert_max_num_queries(MAX_API_QUERIES):
        viewer_api.get("/api/v1/inventory/machines/?limit=200")
