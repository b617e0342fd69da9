import logging


def test_numba_driver_chatter_stays_out_of_the_log():
    # The CUDA driver logs each allocation and free at INFO; a gpu worker would drown in it.
    assert not logging.getLogger("numba.cuda.cudadrv.driver").isEnabledFor(logging.INFO)
    assert logging.getLogger("storefront.catalog.cheapest").isEnabledFor(logging.INFO)
