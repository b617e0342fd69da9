"""Static files storage that keeps pages up before ``collectstatic`` has run.

Whitenoise's manifest storage raises ``ValueError`` from ``{% static %}`` for any file missing
from the manifest, so every HTML page was a 500 until ``collectstatic`` ran. While there is no
manifest at all, this storage logs one clear error naming the fix and falls back to the
unhashed URL, which whitenoise serves
from the apps' static folders (``WHITENOISE_USE_FINDERS``) until ``collectstatic`` runs.
"""

import logging

from whitenoise.storage import CompressedManifestStaticFilesStorage

logger = logging.getLogger(__name__)


class ForgivingManifestStaticFilesStorage(CompressedManifestStaticFilesStorage):
    _warned = False

    def stored_name(self, name: str) -> str:
        try:
            return super().stored_name(name)
        except ValueError:
            if self.hashed_files:
                raise  # collectstatic ran and this file is not in it: a real mistake
            if not ForgivingManifestStaticFilesStorage._warned:
                ForgivingManifestStaticFilesStorage._warned = True
                logger.error(
                    "Static file %r is not in the manifest: run `python manage.py "
                    "collectstatic --noinput` before starting the server (make prod-local "
                    "does). Serving unhashed, uncached URLs until then.",
                    name,
                )
            return name
