"""The parcel of the cart, suggestion and order APIs (pricing contract version 2): what one
warehouse of a merchant ships, its units, weight and fee."""

from rest_framework import serializers


class ParcelSerializer(serializers.Serializer):
    """One parcel of a merchant. A merchant that ships from warehouses has one per warehouse
    that ships something; a merchant without warehouses ships one parcel from itself
    (``warehouse_id`` null)."""

    warehouse_id = serializers.IntegerField(
        allow_null=True, help_text="The warehouse it ships from; null: the merchant itself."
    )
    warehouse_name = serializers.CharField(
        allow_blank=True, help_text="'Ships from <name>'; empty with no warehouse."
    )
    units = serializers.IntegerField()
    weight_g = serializers.IntegerField(help_text="Grams.")
    fee = serializers.IntegerField(help_text="In cents; 0 when the merchant ships free.")


class LinesParcelSerializer(ParcelSerializer):
    """A parcel of a cart or a suggestion, with the cart lines it holds."""

    line_ids = serializers.ListField(child=serializers.IntegerField())


class NodeParcelSerializer(LinesParcelSerializer):
    """A parcel of a suggestion, with the engine's node id."""

    node = serializers.CharField(
        help_text="The engine's node: the warehouse id, or the merchant id with none."
    )
