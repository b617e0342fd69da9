"""The catalog: products, offers, the cheapest offer, merchants' shipping zones and terms."""
