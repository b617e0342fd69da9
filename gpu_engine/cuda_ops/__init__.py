"""Building blocks shared by the engine's kernels: the (value, index) order every search and
reduction uses (:mod:`.order`, compiled for both targets) and the CUDA min-with-index
reductions over it (:mod:`.reduce`, imported only where kernels are built)."""
