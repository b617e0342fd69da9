"""The fuzz harness: every route on carts at the extremes of the pricing rules, in child
processes, judged against an independent brute force.

``python -m gpu_engine fuzz`` (:mod:`gpu_engine.fuzz.command`) runs it. The pieces: cart
generators (:mod:`~gpu_engine.fuzz.carts`; version 2's in :mod:`~gpu_engine.fuzz.v2_shapes`,
``--version 2``), the oracle's own pricing and brute force
(:mod:`~gpu_engine.fuzz.reference`), the worker pool that survives crashes and hangs
(:mod:`~gpu_engine.fuzz.supervisor`, :mod:`~gpu_engine.fuzz.worker`), the judging of one cart's
answers (:mod:`~gpu_engine.fuzz.judge`), the run (:mod:`~gpu_engine.fuzz.runner`) and its counts
(:mod:`~gpu_engine.fuzz.report`).
"""
