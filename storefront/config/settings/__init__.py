"""Settings modules: ``base`` (every deployment, from the environment) and ``test``."""
