"""One tree of errors. The CLI maps each class to an exit code and prints ``str(err)`` as one line."""


class SqlanonError(Exception):
    """Base of every error sqlanon raises on purpose."""

    exit_code = 1


class ConfigError(SqlanonError):
    """Bad flags, policy keys or values, unknown columns, missing files: the user's call is off."""

    exit_code = 2


class HierarchyError(SqlanonError):
    """A hierarchy is malformed (ragged, a leaf twice, not a tree, NULLs) or misses source values."""

    exit_code = 1


class UnsatisfiableError(SqlanonError):
    """No plan meets the privacy model within the suppression budget."""

    exit_code = 3


class EngineError(SqlanonError):
    """The database engine failed to run a statement."""

    exit_code = 1
