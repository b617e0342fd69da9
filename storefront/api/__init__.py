"""The storefront's REST API modules (mounted under ``/api/v1/``)."""
