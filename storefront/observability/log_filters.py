"""Logging filters. Django logs a denied request (``PermissionDenied``, a bad request, a
suspicious operation) with its exception's traceback; a 4xx is expected traffic, so it keeps
a one-line record and only a 5xx keeps its traceback."""

import logging


class ClientErrorWithoutTraceback(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        status_code = getattr(record, "status_code", None)
        if isinstance(status_code, int) and status_code < 500:
            record.exc_info = None
            record.exc_text = None
        return True
