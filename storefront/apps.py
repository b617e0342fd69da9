from django.apps import AppConfig


class StorefrontConfig(AppConfig):
    name = "storefront"
    verbose_name = "Marketplace"
