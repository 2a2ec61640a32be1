"""judge: see docs/architecture.md."""
