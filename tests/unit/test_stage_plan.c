/* test_stage_plan.c - launcher/stage/stage_plan and stage_job: the chain
 * an entry flows along (rank 0 reads; only nodes that lack it take part),
 * --entry parsing and the node's record. */
#include "tests/unit/testlib.h"

#include "common/sbuf.h"              // defines: struct sbuf
#include "launcher/stage/stage_job.h" // defines: struct stage_job, stage_job_*
#include "launcher/stage/stage_plan.h" // defines: struct stage_link, stage_plan_link, stage_plan_chunks

/* Every rank's link as stage_mpi.c derives it: the collectives' results
 * computed here in rank order (an all-reduce, two exclusive scans), then
 * each rank's next from the rank after it that is in the chain. */
static void links_of(const unsigned char *lacks, int n, struct stage_link *link)
{
	int lacking = 0, nin = 0, before = 0, prev_in = -1;

	for (int r = 0; r < n; r++) {
		lacking += lacks[r] != 0;
		nin += r == 0 || lacks[r];
	}
	for (int r = 0; r < n; r++) {
		int in = r == 0 || lacks[r];

		stage_plan_link(in, lacking, nin, before, prev_in, &link[r]);
		if (link[r].place > 0) {
			assert_true(link[link[r].prev].has_next);
			link[link[r].prev].next = r;
		}
		before += in;
		if (in)
			prev_in = r;
	}
}

static void stage_plan__chain_is_the_reader_then_the_ranks_that_lack_the_entry(void **state)
{
	const unsigned char lacks[5] = { 0, 1, 0, 1, 1 };
	struct stage_link l[5];

	(void)state;
	links_of(lacks, 5, l);
	assert_int_equal(l[0].len, 4);
	assert_int_equal(l[0].place, 0);
	assert_int_equal(l[0].prev, -1);
	assert_int_equal(l[0].next, 1);
	assert_int_equal(l[1].place, 1);
	assert_int_equal(l[1].next, 3);
	assert_int_equal(l[3].place, 2);
	assert_int_equal(l[3].prev, 1);
	assert_int_equal(l[3].next, 4);
	assert_int_equal(l[4].place, 3);
	assert_int_equal(l[4].next, -1);
	assert_false(l[4].has_next);
	assert_int_equal(l[2].place, -1);
	assert_int_equal(l[2].prev, -1);
	assert_int_equal(l[2].next, -1);
}

static void stage_plan__no_chain_when_every_node_holds_the_entry(void **state)
{
	const unsigned char none[3] = { 0, 0, 0 }, only0[3] = { 1, 0, 0 };
	struct stage_link l[3];

	(void)state;
	links_of(none, 3, l);
	for (int r = 0; r < 3; r++) {
		assert_int_equal(l[r].len, 0);
		assert_int_equal(l[r].place, -1);
	}
	links_of(only0, 3, l);
	assert_int_equal(l[0].len, 1);
	assert_int_equal(l[0].place, 0);
	assert_false(l[0].has_next);
	assert_int_equal(l[1].place, -1);
}

static void stage_plan__chunks_round_up(void **state)
{
	(void)state;
	assert_int_equal(stage_plan_chunks(0, 4), 0);
	assert_int_equal(stage_plan_chunks(4, 4), 1);
	assert_int_equal(stage_plan_chunks(5, 4), 2);
}

/* 65,536 nodes, every other one lacking the entry: the chain is rank 0
 * then the odd ranks, every rank's link is found from the collectives'
 * figures alone, and a petabyte in 4 MiB chunks is counted without
 * overflow. */
static void stage_plan__holds_at_65536_nodes(void **state)
{
	enum { N = 65536 };
	unsigned char *lacks = malloc(N);
	struct stage_link *l = malloc(N * sizeof(*l));

	(void)state;
	for (int r = 0; r < N; r++)
		lacks[r] = r % 2;
	links_of(lacks, N, l);
	assert_int_equal(l[0].len, N / 2 + 1);
	assert_int_equal(l[0].next, 1);
	assert_int_equal(l[N - 1].place, N / 2);
	assert_int_equal(l[N - 1].prev, N - 3);
	assert_int_equal(l[N - 1].next, -1);
	assert_int_equal(l[N - 3].next, N - 1);
	assert_int_equal(l[N - 2].place, -1);
	assert_true(stage_plan_chunks(UINT64_C(1) << 50, 4u << 20) == UINT64_C(1) << 28);
	free(lacks);
	free(l);
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
