/* test_precision.c - launcher/rank/precision: the warning submit gives
 * when a node's CPU lacks the native arithmetic of train.precision. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "common/diag.h"             // defines: struct diag_list
#include "common/spec/spec.h"        // defines: struct job
#include "launcher/rank/precision.h" // defines: precision_check, precision_trains_on_cpu
#include "topology/topo.h"           // defines: struct node_topo

#define ICX_FLAGS "fpu sse2 avx2 avx512f avx512bw"
#define SPR_FLAGS "fpu sse2 avx2 avx512f avx512_bf16 amx_tile amx_bf16"

/* The one message precision_check adds for a CPU-trained job, or NULL. */
static const char *check(struct diag_list *dl, int precision, int device, const char *flags)
{
	struct job job;
	struct node_topo t;

	memset(&job, 0, sizeof(job));
	memset(&t, 0, sizeof(t));
	job.train.precision = precision;
	job.train.device = device;
	t.cpu_flags = (char *)flags;
	diag_list_release(dl);
	precision_check(&job, "icx.xml", &t, dl);
	if (!dl->n)
		return NULL;
	assert_int_equal(dl->n, 1);
	assert_int_equal(dl->v[0].severity, DIAG_WARNING);
	assert_string_equal(dl->v[0].where, "icx.xml");
	assert_string_equal(dl->v[0].path, "train.precision");
	return dl->v[0].msg;
}

static void precision__warns_of_bf16_on_a_cpu_without_bf16_flags(void **state)
{
	struct diag_list dl = DIAG_LIST_INIT;

	(void)state;
	assert_string_equal(check(&dl, PRECISION_BF16, DEVICE_CPU, ICX_FLAGS),
			    "bf16 cannot be faster than fp32 on this node's CPU: it has no "
			    "AVX512-BF16 or AMX-BF16, so the trainer emulates bf16 with fp32 "
			    "arithmetic; precision: fp32 is the alternative");
	assert_null(check(&dl, PRECISION_BF16, DEVICE_CPU, SPR_FLAGS));
	/* AMX hidden (a hypervisor's choice): the same rate as fp32 FMA */
	assert_string_equal(check(&dl, PRECISION_BF16, DEVICE_CPU,
				  "avx2 fma avx512f avx512_bf16 avx512_fp16"),
			    "bf16 cannot be faster than fp32 on this node's CPU: Intel AVX512-BF16 "
			    "without AMX computes bf16 dot products at the fp32 FMA rate; "
			    "precision: fp32 is the alternative");
	/* AMD Zen 4: a dot product at twice the FMA rate */
	assert_null(check(&dl, PRECISION_BF16, DEVICE_CPU, "sse4a avx2 fma avx512f avx512_bf16"));
	assert_null(check(&dl, PRECISION_FP32, DEVICE_CPU, ICX_FLAGS));
	diag_list_release(&dl);
}

static void precision__fp16_is_emulated_on_every_cpu(void **state)
{
	struct diag_list dl = DIAG_LIST_INIT;
	const char *want = "fp16 cannot be faster than fp32 on any CPU: the trainer's oneDNN 2.6 "
			   "has no fp16 CPU kernels (AVX512-FP16 and AMX-FP16 unused), so it "
			   "emulates fp16 with fp32 arithmetic; precision: fp32 is the alternative "
			   "(bf16 runs natively on CPUs with AVX512-BF16 or AMX-BF16)";

	(void)state;
	assert_string_equal(check(&dl, PRECISION_FP16, DEVICE_CPU, SPR_FLAGS), want);
	assert_string_equal(check(&dl, PRECISION_FP16, DEVICE_CPU, NULL), want);
	/* auto with no GPU on the node trains on the CPU too */
	assert_string_equal(check(&dl, PRECISION_FP16, DEVICE_AUTO, ICX_FLAGS), want);
	diag_list_release(&dl);
}

static void precision__cannot_tell_without_cpu_flags(void **state)
{
	struct diag_list dl = DIAG_LIST_INIT;

	(void)state;
	assert_string_equal(check(&dl, PRECISION_BF16, DEVICE_CPU, NULL),
			    "cannot tell whether this node's CPU has AVX512-BF16 or AMX-BF16 for "
			    "bf16: the topology records no CPU flags (hpctrain topo --export-xml on "
			    "the node saves them)");
	diag_list_release(&dl);
}

static void precision__says_nothing_of_jobs_that_do_not_train_on_the_cpu(void **state)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct job job;
	struct node_topo t;

	(void)state;
	assert_null(check(&dl, PRECISION_BF16, DEVICE_CUDA, ICX_FLAGS));
	memset(&job, 0, sizeof(job));
	memset(&t, 0, sizeof(t));
	/* a command job runs its own program, not the trainer */
	job.command.n = 1;
	job.train.precision = PRECISION_FP16;
	job.train.device = DEVICE_CPU;
	assert_false(precision_trains_on_cpu(&job, &t));
	precision_check(&job, "icx.xml", &t, &dl);
	assert_int_equal(dl.n, 0);
	/* auto with GPUs requested and on the node: trains on them */
	job.command.n = 0;
	job.train.device = DEVICE_AUTO;
	job.resources.gpus_per_node = 8;
	t.n_gpus = 8;
	assert_false(precision_trains_on_cpu(&job, &t));
	t.n_gpus = 0;
	assert_true(precision_trains_on_cpu(&job, &t));
	diag_list_release(&dl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(precision__warns_of_bf16_on_a_cpu_without_bf16_flags),
		cmocka_unit_test(precision__fp16_is_emulated_on_every_cpu),
		cmocka_unit_test(precision__cannot_tell_without_cpu_flags),
		cmocka_unit_test(precision__says_nothing_of_jobs_that_do_not_train_on_the_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
