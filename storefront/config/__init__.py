"""The Django project: settings, root URLconf, WSGI and the Celery app."""
