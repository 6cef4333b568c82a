"""The command line: one Typer app, thin, rendering with Rich."""
