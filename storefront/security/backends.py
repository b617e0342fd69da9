"""django-axes' lockout check as the first authentication backend.

Every login over HTTP (web, admin, API token) passes its request and is checked. An
``authenticate()`` without a request (a management command, the test client's ``login``)
has no client address to count against: it is left to the next backend instead of failing.
"""

from axes.backends import AxesStandaloneBackend


class LockoutBackend(AxesStandaloneBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
