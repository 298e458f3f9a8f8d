"""The genetic search (Wan et al. 2015): its planner, its statistics, its cuts and its seeding."""
