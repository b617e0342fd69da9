"""Genetic algorithm: shared arrays and RNG (core), operations compiled for both targets
(ops), the CPU twin (cpu), the CUDA kernels (cuda) and the run loop (solve)."""
