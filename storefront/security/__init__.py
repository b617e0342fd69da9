"""Request-edge security: the client's address behind trusted proxies, atomic throttles and
form limits, the login lockout's responses (django-axes), the admin's optional one-time
passwords for staff (django-otp) and bounded JSON parsing for the API."""
