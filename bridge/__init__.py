"""Fate Bridge: the authoritative Fate referee behind a Foundry VTT module."""

__version__ = "0.5.0"
