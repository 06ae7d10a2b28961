def check() -> None:
    """placeholder"""
