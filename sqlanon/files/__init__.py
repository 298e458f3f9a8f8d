"""Reading and writing files, below every other room: the strict YAML/JSON reader
(:mod:`sqlanon.files.strict_load`) and the rules for the paths sqlanon writes
(:mod:`sqlanon.files.paths`). The policy, hierarchies, engines and the release all read or write
files through these, so none of them needs to import the policy's room (``sqlanon.config``)."""
