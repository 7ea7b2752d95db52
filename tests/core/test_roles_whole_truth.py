"""Issue 33 item 5: a role is the whole truth. Setting a role sets or clears the staff and
superuser flags with it, so a demoted superuser loses users, audit, /admin/ and user creation;
the last active admin cannot be demoted or disabled."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.test import Client

from core import services
from core.roles import is_admin

pytestmark = pytest.mark.django_db


def _superuser(username="root"):
    """An admin as `manage.py ensure_admin` makes it: superuser, staff and the admin group."""
    user = get_user_model().objects.create_superuser(username=username, password="pw-x-123456")
    user.groups.add(Group.objects.get_or_create(name="admin")[0])
    return user


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_superuser_set_to_viewer_loses_every_admin_page(admin_client_):
    root = _superuser()
    root_client = _client(root)
    assert root_client.get("/admin/").status_code == 200  # before: an admin

    response = admin_client_.post(
        f"/accounts/users/{root.pk}/", {"role": "viewer", "is_active": "on"}
    )

    assert response.status_code == 302
    root.refresh_from_db()
    assert (root.is_superuser, root.is_staff) == (False, False)
    assert not is_admin(get_user_model().objects.get(pk=root.pk))
    assert root_client.get("/accounts/users/").status_code == 403
    assert root_client.get("/audit/").status_code == 403
    assert root_client.get("/admin/").status_code == 302  # to the admin site's login
    created = root_client.post(
        "/accounts/users/", {"username": "mallory", "email": "", "role": "admin"}
    )
    assert created.status_code == 403
    assert not get_user_model().objects.filter(username="mallory").exists()


def test_a_role_set_in_the_service_clears_the_flags_and_says_so(admin_user):
    root = _superuser()

    services.set_role(user=root, role="planner", actor=admin_user)

    root.refresh_from_db()
    assert (root.is_superuser, root.is_staff) == (False, False)
    assert list(root.groups.values_list("name", flat=True)) == ["planner"]
    assert root.history.first().history_change_reason == "role: admin → planner"


def test_an_admin_made_on_the_users_page_may_open_the_admin_site(admin_client_, viewer):
    admin_client_.post(f"/accounts/users/{viewer.pk}/", {"role": "admin", "is_active": "on"})

    viewer.refresh_from_db()
    assert viewer.is_staff
    assert _client(viewer).get("/admin/").status_code == 200


def test_the_flags_of_an_older_demotion_count_for_nothing(viewer):
    viewer.is_superuser = viewer.is_staff = True  # demoted before roles set the flags
    viewer.save()

    assert not is_admin(get_user_model().objects.get(pk=viewer.pk))


def test_a_superuser_without_a_role_is_an_admin():
    user = get_user_model().objects.create_superuser(username="ops", password="pw-x-123456")

    assert is_admin(user)


def test_the_last_admin_cannot_be_demoted_or_disabled(viewer):
    root = _superuser()

    with pytest.raises(ValidationError, match="last active admin"):
        services.set_role(user=root, role="viewer", actor=viewer)
    with pytest.raises(ValidationError, match="last active admin"):
        services.set_active(user=root, active=False, actor=viewer)

    root.refresh_from_db()
    assert root.is_superuser
    assert root.is_active
    assert list(root.groups.values_list("name", flat=True)) == ["admin"]
