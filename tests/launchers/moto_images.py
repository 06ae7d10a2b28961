"""The machine image the EC2 tests launch from on moto."""

# One of moto's bundled images. moto launches an instance from it whether or not its image
# list is loaded in this process: a test that sets MOTO_EC2_LOAD_DEFAULT_AMIS=false (1.5 s a
# region saved) leaves the list empty for the later tests of its worker, since moto keeps
# its region backends across resets, so no test looks an image up.
IMAGE = "ami-12c6146b"
