"""The lattice family: the lattice, the optimal search (Flash), Samarati, Incognito, local recoding."""
