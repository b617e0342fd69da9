"""Request-edge security: the client's address behind trusted proxies, atomic throttles, the
login lockout's responses (django-axes) and bounded JSON parsing for the API."""
