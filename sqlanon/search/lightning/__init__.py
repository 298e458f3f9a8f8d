"""Lightning: ARX's heuristic lattice search for wide tables, without building the lattice."""
