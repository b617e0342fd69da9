from django.core.validators import MaxValueValidator
from django.db import models

# 100 million in major units. With MAX_LINE_QUANTITY and MAX_CART_LINES this keeps every cart
# total far inside a signed 64-bit integer, which the pricing contract promises solvers.
MAX_MONEY_CENTS = 10**10


class MoneyField(models.PositiveBigIntegerField):
    """An amount in integer minor units (cents) of the deployment currency, never a float."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("help_text", "In cents of the shop currency.")
        super().__init__(*args, **kwargs)

    @property
    def validators(self):
        return [*super().validators, MaxValueValidator(MAX_MONEY_CENTS)]
