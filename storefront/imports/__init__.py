"""Offer feed import: a merchant's offers from a CSV or JSON Lines file.

Run it from the admin (Marketplace > Offer feed imports > Add: pick the merchant, upload the
file; a Celery task imports it while the list shows progress) or from a shell::

    python manage.py import_offers FEED.csv --merchant SLUG      # synchronous, same code
    python manage.py import_offers --resume JOB_ID               # after a failure or crash

The feed format
---------------
UTF-8 text (a byte-order mark is fine), optionally gzip-compressed.

CSV: a header row naming the columns (any order, any case), then one offer per row. The
delimiter is a comma, or a semicolon, tab or pipe when the header uses that instead. Every
column below must be present: unknown columns are refused, not ignored, so a misspelt
``stok`` cannot silently make every offer unlimited.

JSON Lines: one JSON object per line with the same keys; ``stock`` and ``active`` may be left
out (or ``null``). Numbers are read exactly as written (``12.99`` never becomes a float).
Give GTINs as strings, since a JSON number drops leading zeros.

=============  ===========================================================================
gtin           8, 12, 13 or 14 digits with a valid GS1 check digit; spaces and dashes are
               ignored. Leading zeros do not matter (``012345678905`` is the product stored
               as ``0012345678905``). It must name a product of the catalog.
merchant_sku   The merchant's key for the offer: 1-64 characters, no control characters,
               once per feed. A SKU stays with its product: a row giving an existing SKU
               another product is refused (use a new SKU, set the old one inactive).
price          In major units of the shop currency with a dot for decimals: ``12.99``,
               ``12.9``, ``12``, ``0.50`` (at most as many decimals as the currency has, two
               for EUR). No sign, exponent, currency symbol or thousands separator.
price_cents    Instead of ``price`` (never both in one file or row): whole minor units,
               ``1299``. Amounts become integer cents without ever passing through a float.
stock          Units available, a whole number >= 0; empty (JSON ``null``) is unlimited.
active         ``true``/``false``, ``1``/``0``, ``yes``/``no``, ``y``/``n``, ``t``/``f`` in
               any case; empty is ``true``.
warehouse      Optional. The name of one of the merchant's warehouses: ``stock`` is the
               offer's stock there (the offer's own stock becomes the total over its active
               warehouses). A SKU may be on one row per warehouse; its rows must agree on
               everything but the stock and are imported together or not at all. A merchant
               with an active warehouse must name one on every row.
weight_g       Optional. The product's weight per unit in whole grams (parcel rates go by
               weight); empty leaves it as it is. A feed uploaded by the merchant's own staff
               sets it only where the catalog has none (products are shared by merchants).
merchant       Optional. The slug of the merchant the row is for; a row for another merchant
               than the import's is refused (listed in the error report).
=============  ===========================================================================

Feeds without the optional columns import exactly as before.

What an import does
-------------------
- Offers are upserted by (merchant, SKU): new SKUs are created, existing ones updated only
  when price, stock or active differ. Re-running a file changes nothing (no ``updated_at``
  moves; the job counts every row as unchanged). Offers missing from the feed are left alone.
- One active offer per product and merchant: when an active row gives a product a new SKU,
  the merchant's other active offer for that product is deactivated ("superseded"; it stays
  as history, and carts holding it see it as unavailable). A feed listing two active SKUs for
  one product is ambiguous: all of those rows are refused.
- Rows that fail (any bad field, unknown or ambiguous GTIN, a SKU on several rows, a SKU that
  would move to another product, several active SKUs for one product, a row of the wrong
  shape) are listed in a downloadable CSV error report (row = file line, sku, field,
  message; one line per failure) and skipped; every valid row still lands.
- A header problem, an empty file or a file that is not UTF-8 fails the whole job before any
  change.
- GTINs are resolved for the whole feed in one batched radix-tree lookup
  (``storefront.imports.resolve``), never one query per row.
- Valid rows are written in batches (``OFFER_IMPORT_BATCH_SIZE``, default 50,000), each in
  one transaction with the job's progress, so a crash leaves whole batches and a resume
  continues after the last committed one.
- Products whose offers changed get their stored cheapest offer recomputed afterwards, once
  per import (``storefront.catalog.cheapest``).
"""
