"""Console script (placeholder during bootstrap)."""


def main() -> int:
    return 0
