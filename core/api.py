"""REST API of the core app: the API root, /api/v1/."""

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView


class ApiRootView(APIView):
    """Entry points of the ServePlan API."""

    @extend_schema(exclude=True)
    def get(self, request: Request) -> Response:
        def url(name: str) -> str:
            return reverse(name, request=request)

        return Response(
            {
                "schema": url("api-schema"),
                "docs": url("api-docs"),
                "inventory": request.build_absolute_uri("/api/v1/inventory/"),
                "plans": request.build_absolute_uri("/api/v1/plans/"),
                "decisions": request.build_absolute_uri("/api/v1/decisions/"),
                "monitoring": request.build_absolute_uri("/api/v1/monitoring/"),
            }
        )
