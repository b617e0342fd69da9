from django.apps import AppConfig


class SmartcartConfig(AppConfig):
    name = "smartcart"
    verbose_name = "Smart cart"
