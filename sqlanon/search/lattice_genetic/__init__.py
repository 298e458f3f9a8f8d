"""``--search lattice-genetic``: a genetic algorithm over the full-domain lattice (Wan et al.), ARX's GA."""
