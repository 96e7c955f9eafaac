"""The package version, on the bottom floor so that storage (cache keys), the CLI and the
experiment record can read it without importing the package root."""

__version__ = "0.1.0"
