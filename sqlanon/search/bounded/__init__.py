"""The optimal search on lattices too large to build: Flash bounded by time and steps."""
