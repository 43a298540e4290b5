"""Python package of bench/run: see bench/README.md."""
