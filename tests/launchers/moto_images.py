"""The machine image the EC2 tests launch from on moto."""

# One of moto's bundled images: the only list of images moto's regions get in the suite
# (tests/conftest.py names it in MOTO_AMIS_PATH), so it exists in every region.
IMAGE = "ami-12c6146b"
