"""The bottom-up search (Wang, Yu, Chakraborty 2004): its planner and statistics."""
