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
    #: set by :func:`sqlanon.privacy.diagnosis.unsatisfiable`: the failing models and the closest node
    details: dict


class EngineError(SqlanonError):
    """The database engine failed to run a statement."""

    exit_code = 1


class EngineInputError(EngineError, ConfigError):
    """The engine refused the user's input, not a statement of ours: a file that is not what its
    name or ``--format`` says, two columns one name to the engine. Exit 2, like a ConfigError;
    still an EngineError for code that catches those (:func:`sqlanon.engine.base.engine_error`)."""

    exit_code = 2


#: a temporary file of a release or report (``.NAME.<pid>-<hex>.tmp``, ``.NAME.tmp``): the
#: user named ``NAME``
_TEMP_NAME = r"^\.(.+?)\.(?:(?:\d+-)?[0-9a-f]{8}\.)?tmp$"


def shown_path(path: str) -> str:
    """A path as the user named it: the final name for one of our temporary files.

    >>> shown_path("/data/.out.parquet.4242-0123abcd.tmp"), shown_path("/data/.r.html.tmp"), shown_path("a.csv")
    ('/data/out.parquet', '/data/r.html', 'a.csv')
    """
    import os
    import re

    folder, name = os.path.split(path)
    temp = re.match(_TEMP_NAME, name)
    return os.path.join(folder, temp.group(1)) if temp else path


def from_os_error(err: OSError) -> SqlanonError:
    """A file-system failure (a read-only or full disk, a folder that is a file) as one line
    naming the path; a path that cannot exist as given is the user's (exit 2).

    >>> str(from_os_error(PermissionError(13, "Permission denied", "/sys/.r.html.tmp")))
    'cannot write /sys/r.html: Permission denied'
    """
    import errno

    path = shown_path(str(err.filename)) if err.filename is not None else None
    reason = err.strerror or type(err).__name__
    if path is None:
        return SqlanonError(f"file system error: {reason}")
    if err.errno == errno.EEXIST:  # os.makedirs through a file
        return ConfigError(f"cannot create folder {path}: a file has that name")
    if err.errno in (errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.ENAMETOOLONG):
        return ConfigError(f"cannot use {path}: {reason}")
    if err.errno in (errno.EROFS, errno.ENOSPC, errno.EACCES, errno.EPERM, errno.EDQUOT):
        return SqlanonError(f"cannot write {path}: {reason}")
    return SqlanonError(f"{path}: {reason}")
