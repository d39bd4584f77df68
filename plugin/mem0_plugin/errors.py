"""The one error hierarchy of the plugin.

Every anticipated failure is a `Mem0PluginError`. The CLI turns it into one line
on stderr and the exit code below (in one place: `cli.common.run_command`); the
MCP server turns it into a tool error with the same message.
"""


class Mem0PluginError(Exception):
    """Base of every anticipated error; `exit_code` is what the CLI exits with."""

    exit_code = 1


class InvalidInputError(Mem0PluginError):
    """An argument, record or file the user or a client sent is malformed."""

    exit_code = 2


class FilterError(InvalidInputError):
    """A filter does not follow the mem0 grammar (docs/reads.md, "Filters")."""


class NotFoundError(Mem0PluginError):
    """No memory with that id in the caller's scope (another user's memory included)."""

    exit_code = 3


class ScopeError(Mem0PluginError):
    """The call names another user: refused, never executed."""

    exit_code = 4


class AuthError(Mem0PluginError):
    """An HTTP request to `mem0-server` without a valid API key (docs/server.md, "Access")."""

    exit_code = 4


class TooLargeError(InvalidInputError):
    """An HTTP request body over the server's limit (docs/server.md, "Limits")."""


class StaleWriteError(Mem0PluginError):
    """A conditional write found the memory changed since it was read."""

    exit_code = 5


class ImmutableError(Mem0PluginError):
    """An update tried to change an immutable memory."""

    exit_code = 5


class StoreError(Mem0PluginError):
    """The store cannot be opened, read or written (corrupt file, unwritable home, ...)."""

    exit_code = 6


class WriteConflictError(StoreError):
    """The database aborted a write transaction for a conflict with another (a serialization
    failure or a deadlock, docs/stores.md): nothing of it was applied; it may be run again."""

    sqlstate: str = ""


class ConfigError(Mem0PluginError):
    """Configuration (store URL, environment) is unusable."""

    exit_code = 2


class LockBusyError(Mem0PluginError):
    """Another `mem0-dream --auto` holds the lock."""

    exit_code = 0
    lock_path: object = None  # the lock file held (a Path), set where it is raised


class PlanError(InvalidInputError):
    """A dream plan file is malformed or belongs to another scope."""
