"""The series store in use follows the setting; an unknown name is refused, naming the setting."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from monitoring import stores


def test_the_embedded_store_is_the_default():
    assert stores.current().name == "embedded"


def test_an_unknown_store_is_refused_naming_the_setting(settings):
    settings.MONITORING_SERIES_STORE = "influx"
    with pytest.raises(ImproperlyConfigured, match="MONITORING_SERIES_STORE"):
        stores.current()
