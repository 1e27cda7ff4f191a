"""Thin commands: parse, call the library, print, exit code. Heavy imports stay inside commands."""
