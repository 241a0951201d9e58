# launcher/container/build.mk - the container a rank's program runs in:
# each runtime's command line (container_argv.c, pure), what an image is
# and which runtime a node has (container_image.c), and the image's
# content digest, the part of a run's identity its spec cannot hold
# (container_digest.c), an image a runtime reads itself checked against
# that digest before it starts (container_verify.c), a SquashFS image
# mounted once per node outside ch-run (container_squash.c), podman's program found and its container
# removed for the supervisor (container_podman.c), one rank's
# program wrapped, or its command line previewed (container_wrap.c), and
# a directory image packed once for container.stage (container_pack.c);
# the runtimes' helper programs run quietly (container_proc.c).

# The runtimes the tests start for real (tests/cli/container.bats):
# Charliecloud, SquashFS images mounted by squashfuse (fuse3 brings
# fusermount), Podman under runc (crun cannot start containers on the
# test machines).
DEBIAN_PKGS += charliecloud-runtime squashfs-tools squashfuse fuse3 podman runc

# tests/bench/digest.sh hashes the image file with openssl dgst as well as
# sha256sum: the digest is OpenSSL's SHA-256, which the CPU's SHA
# extensions speed up and coreutils' does not use.
BENCH_PKGS += openssl

# The command lines; the digest and its cache, in a temporary directory.
UNIT_TESTS += test_container test_container_digest

# The MPI-in-a-container test (tests/cli/container.bats) builds a Debian
# image with Open MPI and mpi4py once, from the mirror apt uses (no registry),
# under build/images (tests/cli/helpers/mkmpiimage.sh).
DEBIAN_PKGS += debootstrap
