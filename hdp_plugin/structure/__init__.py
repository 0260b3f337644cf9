"""structure stage."""
