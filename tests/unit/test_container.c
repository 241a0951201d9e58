/* test_container.c - launcher/container/container_argv: each runtime's
 * command line for one rank, as goldens.  Apptainer and enroot cannot be
 * installed on the test machines, so these goldens are their tests; the
 * same lines are documented in CONTAINERS of hpctrain-launch(1). */
#include "tests/unit/testlib.h"

#include "launcher/container/container_argv.h" // defines: container_argv_build, struct container_input

static char *const program[] = { "python3", "train.py", "--lr", "$(id)", "a b", NULL };
static const char *const data[] = { "/data/fmnist" };
static const char *const env_names[] = { "RANK", "WORLD_SIZE" };
static const char *const ulimits[] = { "nofile=1024:1024", "nproc=4096:4096" };

/* One rank of two on its node, bound to cores 4-7 on NUMA node 1. */
static struct container_input input(struct job_container *c, int runtime,
				    enum container_image_kind kind)
{
	struct container_input in = {
		.c = c, .runtime = runtime, .kind = kind, .run_dir = "/srv/runs/j/0123",
		.data_dirs = data, .ndata = 1, .workdir = "/srv/runs/j/0123", .cpus = "4-7",
		.mems = "1", .gpus = true, .local_size = 2, .join_tag = "42.0",
		.podman_runtime = "runc", .podman_ulimits = ulimits, .nulimits = 2, .env_names = env_names, .nenv = 2, .argv = program,
	};
	return in;
}

/* The vector joined with '|' and the program's arguments after it. */
static void check_argv(const struct container_input *in, const char *want)
{
	struct job_argv a = { NULL, 0 };
	struct sbuf err = SBUF_INIT, got = SBUF_INIT;

	if (container_argv_build(in, &a, &err))
		fail_msg("refused: %s", err.buf);
	for (size_t i = 0; i < a.n; i++)
		sbuf_addf(&got, "%s%s", i ? "|" : "", a.v[i]);
	assert_null(a.v[a.n]);
	assert_string_equal(got.buf, want);
	container_argv_release(&a);
	sbuf_release(&err);
	sbuf_release(&got);
}

static void check_refused(const struct container_input *in, const char *want)
{
	struct job_argv a = { NULL, 0 };
	struct sbuf err = SBUF_INIT;

	assert_int_equal(container_argv_build(in, &a, &err), -1);
	assert_string_equal(err.buf, want);
	assert_int_equal(a.n, 0);
	sbuf_release(&err);
}

static struct job_container section(char *image, char **mounts, size_t nmounts)
{
	struct job_container c = { .image = image, .mounts = { mounts, nmounts } };

	return c;
}

static void container__charliecloud_binds_run_and_data_dirs_at_their_paths(void **state)
{
	char *mounts[] = { "/scratch", "/opt/site:/site", "/data/fmnist" };
	struct job_container c = section("/img/torch", mounts, 3);
	struct container_input in = input(&c, CONTAINER_CHARLIECLOUD, CONTAINER_IMAGE_DIR);

	(void)state;
	check_argv(&in, "ch-run|--bind=/srv/runs/j/0123:/srv/runs/j/0123"
			"|--bind=/data/fmnist:/data/fmnist|--bind=/scratch:/scratch"
			"|--bind=/opt/site:/site|--cd=/srv/runs/j/0123|--unset-env=LD_PRELOAD"
			"|--join-ct=2|--join-tag=42.0|/img/torch|--"
			"|python3|train.py|--lr|$(id)|a b");
	c.writable = true;
	in.local_size = 1;
	in.workdir = NULL;
	in.run_dir = NULL;
	in.ndata = 0;
	c.mounts.n = 0;
	check_argv(&in, "ch-run|--write|--unset-env=LD_PRELOAD|/img/torch|--"
			"|python3|train.py|--lr|$(id)|a b");
}

/* Mounted outside by launch (squashfuse), the SquashFS image is a
 * directory to ch-run, which then execs in place. */
static void container__charliecloud_starts_a_squashfs_image_mounted_outside(void **state)
{
	struct job_container c = section("/img/torch.sqfs", NULL, 0);
	struct container_input in = input(&c, CONTAINER_CHARLIECLOUD, CONTAINER_IMAGE_SQUASHFS);

	(void)state;
	in.squash_dir = "/tmp/hpctrain-squash-0/0123";
	in.local_size = 1;
	in.ndata = 0;
	check_argv(&in, "ch-run|--bind=/srv/runs/j/0123:/srv/runs/j/0123|--cd=/srv/runs/j/0123"
			"|--unset-env=LD_PRELOAD|/tmp/hpctrain-squash-0/0123|--"
			"|python3|train.py|--lr|$(id)|a b");
}

static void container__charliecloud_refuses_squashfs_and_references(void **state)
{
	struct job_container c = section("/img/torch.sqfs", NULL, 0);
	struct container_input in = input(&c, CONTAINER_CHARLIECLOUD, CONTAINER_IMAGE_SQUASHFS);

	(void)state;
	check_refused(&in, "refusing the SquashFS image /img/torch.sqfs under charliecloud: "
			   "ch-run would stay behind as its FUSE server, so signals and kills "
			   "would not reach the program; unpack it into a directory (ch-convert) "
			   "for now");
	c.image = "nvcr.io/nvidia/pytorch:24.01-py3";
	in.kind = CONTAINER_IMAGE_REF;
	check_refused(&in, "charliecloud cannot start the image reference "
			   "nvcr.io/nvidia/pytorch:24.01-py3; give it a directory image");
}

static void container__apptainer_execs_with_nv_and_binds(void **state)
{
	struct job_container c = section("/img/torch.sif", NULL, 0);
	struct container_input in = input(&c, CONTAINER_APPTAINER, CONTAINER_IMAGE_SIF);

	(void)state;
	check_argv(&in, "apptainer|exec|--nv|--bind=/srv/runs/j/0123:/srv/runs/j/0123"
			"|--bind=/data/fmnist:/data/fmnist|--pwd=/srv/runs/j/0123"
			"|/img/torch.sif|python3|train.py|--lr|$(id)|a b");
	c.image = "docker://nvcr.io/nvidia/pytorch:24.01-py3";
	c.writable = true;
	in.kind = CONTAINER_IMAGE_REF;
	in.gpus = false;
	in.ndata = 0;
	in.workdir = NULL;
	check_argv(&in, "apptainer|exec|--writable|--bind=/srv/runs/j/0123:/srv/runs/j/0123"
			"|docker://nvcr.io/nvidia/pytorch:24.01-py3|python3|train.py|--lr|$(id)|a b");
}

static void container__enroot_starts_a_squashfs_image_with_mounts_and_env(void **state)
{
	struct job_container c = section("/img/torch.sqsh", NULL, 0);
	struct container_input in = input(&c, CONTAINER_ENROOT, CONTAINER_IMAGE_SQUASHFS);

	(void)state;
	check_argv(&in, "enroot|start|--mount=/srv/runs/j/0123:/srv/runs/j/0123"
			"|--mount=/data/fmnist:/data/fmnist|--env=RANK|--env=WORLD_SIZE"
			"|/img/torch.sqsh|env|--chdir=/srv/runs/j/0123|--"
			"|python3|train.py|--lr|$(id)|a b");
	in.kind = CONTAINER_IMAGE_DIR;
	c.image = "/img/torch";
	check_refused(&in, "enroot cannot start the directory /img/torch; give it a SquashFS "
			   "image (enroot import makes one)");
}

static void container__podman_gets_the_host_env_and_the_plans_cpuset(void **state)
{
	struct job_container c = section("/img/torch", NULL, 0);
	struct container_input in = input(&c, CONTAINER_PODMAN, CONTAINER_IMAGE_DIR);

	(void)state;
	in.name = "hpctrain-42.0-r3-977";
	in.pidfile = "/tmp/hpctrain-podman-Ab12Cd/pid";
	check_argv(&in, "podman|--runtime=runc|run|--rm|--name=hpctrain-42.0-r3-977"
			"|--pidfile=/tmp/hpctrain-podman-Ab12Cd/pid|--env-host|--network=host|--ipc=host"
			"|--pid=host|--ulimit=nofile=1024:1024|--ulimit=nproc=4096:4096"
			"|--read-only|--volume=/tmp:/tmp"
			"|--volume=/srv/runs/j/0123:/srv/runs/j/0123"
			"|--volume=/data/fmnist:/data/fmnist|--cpuset-cpus=4-7|--cpuset-mems=1"
			"|--device=nvidia.com/gpu=all|--workdir=/srv/runs/j/0123|--rootfs|/img/torch"
			"|python3|train.py|--lr|$(id)|a b");
	c.image = "docker.io/library/debian@sha256:0123";
	c.writable = true;
	in.kind = CONTAINER_IMAGE_REF;
	in.podman_runtime = NULL;
	in.nulimits = 0;
	in.cpus = in.mems = NULL;
	in.gpus = false;
	in.run_dir = NULL;
	in.ndata = 0;
	in.workdir = NULL;
	in.name = NULL;
	in.pidfile = NULL;
	check_argv(&in, "podman|run|--rm|--env-host|--network=host|--ipc=host|--pid=host"
			"|--volume=/tmp:/tmp|docker.io/library/debian@sha256:0123"
			"|python3|train.py|--lr|$(id)|a b");
	c.image = "/img/torch.sif";
	in.kind = CONTAINER_IMAGE_SIF;
	check_refused(&in, "podman cannot start the SIF file /img/torch.sif; give it a "
			   "directory, a SquashFS file or a reference");
	/* a SquashFS image mounted outside, under a throw-away overlay */
	c.image = "/img/torch.sqfs";
	c.writable = false;
	in.kind = CONTAINER_IMAGE_SQUASHFS;
	check_refused(&in, "refusing the SquashFS image /img/torch.sqfs under podman: it is not "
			   "mounted (squashfuse)");
	in.squash_dir = "/tmp/hpctrain-squash-0/abc";
	check_argv(&in, "podman|run|--rm|--env-host|--network=host|--ipc=host|--pid=host"
			"|--read-only|--volume=/tmp:/tmp|--rootfs|/tmp/hpctrain-squash-0/abc:O"
			"|python3|train.py|--lr|$(id)|a b");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(container__charliecloud_binds_run_and_data_dirs_at_their_paths),
		cmocka_unit_test(container__charliecloud_starts_a_squashfs_image_mounted_outside),
		cmocka_unit_test(container__charliecloud_refuses_squashfs_and_references),
		cmocka_unit_test(container__apptainer_execs_with_nv_and_binds),
		cmocka_unit_test(container__enroot_starts_a_squashfs_image_with_mounts_and_env),
		cmocka_unit_test(container__podman_gets_the_host_env_and_the_plans_cpuset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
