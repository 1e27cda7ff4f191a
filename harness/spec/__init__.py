"""Typed models and loaders for every file the harness reads or writes."""
