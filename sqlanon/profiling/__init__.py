"""What ``sqlanon profile`` measures and proposes, one module a concept: the one-statement column
scan (:mod:`sqlanon.profiling.scan`), each column's role (:mod:`sqlanon.profiling.roles`), the
hierarchies computed from the data (:mod:`sqlanon.profiling.proposals`), linked columns
(:mod:`sqlanon.profiling.links`), the risk before (:mod:`sqlanon.profiling.risk`) and the commented
policy (:mod:`sqlanon.profiling.writer`). The command itself, over a session, is
:func:`sqlanon.run.profile.profile`: the run also reads the roles and the scan, so the profiling
room imports nothing of the run.
"""
