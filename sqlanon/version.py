"""The package's version, in a module of its own so that the report and the registry read it without
importing the package's front door (which imports the whole run lazily)."""

__version__ = "0.1.0"
