"""pytest layer (placeholder during bootstrap)."""
