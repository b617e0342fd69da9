"""What every API module shares: the error handler and its responses, parsers, throttles,
schema hooks, input validation, the cart resource's fields from other apps, and the JSON 404
(with the schema and docs in ``api_urls``). The features' own views are in their packages'
``apis.py``."""
