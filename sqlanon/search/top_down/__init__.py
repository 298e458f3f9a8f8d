"""The top-down search (Fung, Wang, Yu 2005): its planner, statistics, join helpers and release rounds."""
