from django.apps import AppConfig


class StorefrontConfig(AppConfig):
    name = "storefront"
    verbose_name = "Marketplace"

    def ready(self) -> None:
        # Merges the anonymous cart into the user's at every login, also logins that never
        # went through the site's URLconf (tests, admin).
        from storefront import receivers  # noqa: F401  (stored cheapest offers stay fresh)
        from storefront.orders import receivers as order_receivers  # noqa: F401
        from storefront.orders import tasks as order_tasks  # noqa: F401
        from storefront.web import signals  # noqa: F401
