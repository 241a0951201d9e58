/* test_stage_plan.c - launcher/stage/stage_plan and stage_job: the chain
 * an entry flows along (rank 0 reads; only nodes that lack it take part),
 * --entry parsing and the node's record. */
#include "tests/unit/testlib.h"

#include "common/sbuf.h"              // defines: struct sbuf
#include "launcher/stage/stage_job.h" // defines: struct stage_job, stage_job_*
#include "launcher/stage/stage_plan.h" // defines: stage_plan_chain, stage_plan_place, stage_plan_chunks

static void stage_plan__chain_is_the_reader_then_the_ranks_that_lack_the_entry(void **state)
{
	const unsigned char lacks[5] = { 0, 1, 0, 1, 1 };
	int chain[5], prev, next;

	(void)state;
	assert_int_equal(stage_plan_chain(lacks, 5, chain), 4);
	assert_int_equal(chain[0], 0);
	assert_int_equal(chain[1], 1);
	assert_int_equal(chain[2], 3);
	assert_int_equal(chain[3], 4);
	assert_int_equal(stage_plan_place(chain, 4, 0, &prev, &next), 0);
	assert_int_equal(prev, -1);
	assert_int_equal(next, 1);
	assert_int_equal(stage_plan_place(chain, 4, 3, &prev, &next), 2);
	assert_int_equal(prev, 1);
	assert_int_equal(next, 4);
	assert_int_equal(stage_plan_place(chain, 4, 4, &prev, &next), 3);
	assert_int_equal(next, -1);
	assert_int_equal(stage_plan_place(chain, 4, 2, &prev, &next), -1);
}

static void stage_plan__no_chain_when_every_node_holds_the_entry(void **state)
{
	const unsigned char none[3] = { 0, 0, 0 }, only0[3] = { 1, 0, 0 };
	int chain[3];

	(void)state;
	assert_int_equal(stage_plan_chain(none, 3, chain), 0);
	assert_int_equal(stage_plan_chain(only0, 3, chain), 1);
	assert_int_equal(chain[0], 0);
}

static void stage_plan__chunks_round_up(void **state)
{
	(void)state;
	assert_int_equal(stage_plan_chunks(0, 4), 0);
	assert_int_equal(stage_plan_chunks(4, 4), 1);
	assert_int_equal(stage_plan_chunks(5, 4), 2);
}

/* 65,536 nodes, every other one lacking the entry: the chain is rank 0
 * then the odd ranks, and the last link's place is found; a petabyte in
 * 4 MiB chunks is counted without overflow. */
static void stage_plan__holds_at_65536_nodes(void **state)
{
	enum { N = 65536 };
	unsigned char *lacks = malloc(N);
	int *chain = malloc(N * sizeof(*chain)), prev, next;

	(void)state;
	for (int r = 0; r < N; r++)
		lacks[r] = r % 2;
	assert_int_equal(stage_plan_chain(lacks, N, chain), N / 2 + 1);
	assert_int_equal(chain[N / 2], N - 1);
	assert_int_equal(stage_plan_place(chain, N / 2 + 1, N - 1, &prev, &next), N / 2);
	assert_int_equal(prev, N - 3);
	assert_int_equal(next, -1);
	assert_int_equal(stage_plan_place(chain, N / 2 + 1, N - 2, &prev, &next), -1);
	assert_true(stage_plan_chunks(UINT64_C(1) << 50, 4u << 20) == UINT64_C(1) << 28);
	free(lacks);
	free(chain);
}

static void stage_job__parses_entries_with_and_without_a_pin(void **state)
{
	struct stage_job j = { 0 };
	struct sbuf err = SBUF_INIT;
	const char *pin = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char *arg = xasprintf("b=/x@y@%s", pin);

	(void)state;
	assert_int_equal(stage_job_parse_entry(&j, "a=/lus/a", &err), 0);
	assert_int_equal(stage_job_parse_entry(&j, arg, &err), 0);
	assert_string_equal(j.v[0].src, "/lus/a");
	assert_null(j.v[0].manifest);
	assert_string_equal(j.v[1].src, "/x@y");
	assert_string_equal(j.v[1].manifest, pin);
	assert_int_equal(stage_job_parse_entry(&j, "a=/other", &err), -1);
	assert_string_equal(err.buf, "--entry a: the name is given twice");
	sbuf_reset(&err);
	assert_int_equal(stage_job_parse_entry(&j, "A=/x", &err), -1);
	sbuf_reset(&err);
	assert_int_equal(stage_job_parse_entry(&j, "c=rel", &err), -1);
	assert_string_equal(err.buf, "--entry c: the source is an absolute path, got 'rel'");
	sbuf_reset(&err);
	assert_int_equal(stage_job_parse_entry(&j, "c=/x@sha256:12", &err), -1);
	free(arg);
	stage_job_release(&j);
	sbuf_release(&err);
}

static void stage_job__record_has_the_agreed_fields(void **state)
{
	struct stage_job j = { 0 };
	json_t *r, *e;

	(void)state;
	stage_job_add(&j, "d", "/lus/d", NULL, false);
	j.bytes_read = 10;
	j.v[0].hit = true;
	r = stage_job_record(&j, "n1");
	assert_string_equal(json_string_value(json_object_get(r, "node")), "n1");
	assert_int_equal(json_integer_value(json_object_get(r, "bytes_read")), 10);
	assert_non_null(json_object_get(r, "bytes_sent"));
	assert_non_null(json_object_get(r, "bytes_received"));
	assert_int_equal(json_integer_value(json_object_get(r, "proc_rchar")), 0);
	assert_non_null(json_object_get(r, "seconds"));
	e = json_array_get(json_object_get(r, "entries"), 0);
	assert_true(json_is_true(json_object_get(e, "hit")));
	assert_non_null(json_object_get(e, "manifest"));
	assert_non_null(json_object_get(e, "refetched"));
	json_decref(r);
	stage_job_release(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stage_plan__chain_is_the_reader_then_the_ranks_that_lack_the_entry),
		cmocka_unit_test(stage_plan__no_chain_when_every_node_holds_the_entry),
		cmocka_unit_test(stage_plan__chunks_round_up),
		cmocka_unit_test(stage_plan__holds_at_65536_nodes),
		cmocka_unit_test(stage_job__parses_entries_with_and_without_a_pin),
		cmocka_unit_test(stage_job__record_has_the_agreed_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
