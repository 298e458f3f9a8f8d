"""Running a policy: the Python API (anonymize), the checker, the session (engine, source, hierarchies) and the SQL script."""
