/* test_oom.c - launcher/supervise/oom: the memory cgroup of a
 * /proc/PID/cgroup text, v1 and v2, and the oom_kill count of its
 * counting file. */
#include "tests/unit/testlib.h"

#include "launcher/supervise/oom.h" // defines: oom_cgroup_paths, oom_kill_count

static void oom__finds_the_memory_cgroup_of_v1_v2_and_hybrid_texts(void **state)
{
	char v1[256], v2[256];

	(void)state;
	/* cgroup v1, as Slurm's task/cgroup makes it; the controllers of a
	 * line may be joined with commas */
	oom_cgroup_paths("12:pids:/\n4:memory:/slurm/uid_0/job_7/step_0\n1:cpu,cpuacct:/x\n",
			 v1, v2, sizeof(v1));
	assert_string_equal(v1, "/slurm/uid_0/job_7/step_0");
	assert_string_equal(v2, "");
	oom_cgroup_paths("3:cpu,memory:/a/b\n", v1, v2, sizeof(v1));
	assert_string_equal(v1, "/a/b");
	/* cgroup v2 alone */
	oom_cgroup_paths("0::/system.slice/slurmstepd.scope/job_7/step_0/user/task_0\n", v1, v2,
			 sizeof(v1));
	assert_string_equal(v1, "");
	assert_string_equal(v2, "/system.slice/slurmstepd.scope/job_7/step_0/user/task_0");
	/* hybrid: both, and a controller named like memory is not it */
	oom_cgroup_paths("9:name=systemd:/\n4:memory:/m\n5:memoryx:/no\n0::/u", v1, v2, sizeof(v1));
	assert_string_equal(v1, "/m");
	assert_string_equal(v2, "/u");
	/* a path that does not fit is none */
	oom_cgroup_paths("4:memory:/0123456789\n", v1, v2, 8);
	assert_string_equal(v1, "");
	oom_cgroup_paths("", v1, v2, sizeof(v1));
	assert_string_equal(v1, "");
	assert_string_equal(v2, "");
}

static void oom__reads_oom_kill_from_memory_events_and_oom_control(void **state)
{
	(void)state;
	assert_int_equal(oom_kill_count("low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\noom_group_kill 0\n"), 2);
	assert_int_equal(oom_kill_count("oom_kill_disable 0\nunder_oom 0\noom_kill 17\n"), 17);
	assert_int_equal(oom_kill_count("oom_kill_disable 0\nunder_oom 0\n"), -1); /* before 4.13 */
	assert_int_equal(oom_kill_count(""), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(oom__finds_the_memory_cgroup_of_v1_v2_and_hybrid_texts),
		cmocka_unit_test(oom__reads_oom_kill_from_memory_events_and_oom_control),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
