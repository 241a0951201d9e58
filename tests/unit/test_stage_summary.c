/* test_stage_summary.c - launcher/runs/stage_summary: the nodes' staging
 * records summed for status and report, from good records and from
 * hostile ones (torn, NaN, huge, missing fields, links, FIFOs), and
 * common/data_read: the trainer's data record. */
#include "testlib.h"
#include "common/fileio.h"
#include "common/data_read.h"
#include "launcher/runs/stage_summary.h"

#include <math.h>
#include <unistd.h>

/* A record as hpctrain stage writes it (stage_job_record). */
static const char *const rec_n0 =
	"{\"node\": \"n0\", \"cache\": \"/c/n0\", \"seconds\": 0.5, \"bytes_read\": 5000000,"
	" \"bytes_sent\": 10000000, \"bytes_received\": 0, \"entries\": [{\"name\": \"ds\","
	" \"manifest\": \"sha256:ab\", \"path\": \"/c/n0/ab\", \"hit\": false, \"bytes\": 5000000,"
	" \"seconds\": 0.5, \"refetched\": 0}]}";
static const char *const rec_n1 =
	"{\"node\": \"n1\", \"seconds\": 1.25, \"bytes_read\": 0, \"bytes_sent\": 0,"
	" \"bytes_received\": 5000000, \"entries\": [{\"name\": \"ds\", \"hit\": false,"
	" \"refetched\": 1}]}";
static const char *const rec_n2 =
	"{\"node\": \"n2\", \"seconds\": 0.75, \"bytes_read\": 0, \"bytes_sent\": 0,"
	" \"bytes_received\": 0, \"entries\": [{\"name\": \"ds\", \"hit\": true, \"refetched\": 0}]}";

static void add(struct stage_summary *s, const char *text)
{
	stage_summary_add(s, text, strlen(text));
}

static void stage_summary__sums_three_nodes_and_names_the_slowest(void **state)
{
	struct stage_summary s;
	struct sbuf line = SBUF_INIT;
	json_t *j;

	(void)state;
	stage_summary_init(&s);
	add(&s, rec_n2); /* in any order: the summary sorts by node */
	add(&s, rec_n0);
	add(&s, rec_n1);
	stage_summary_finish(&s);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.nodes[0].node, "n0");
	assert_int_equal(s.bytes_read, 5000000);
	assert_int_equal(s.bytes_sent, 10000000);
	assert_int_equal(s.bytes_received, 5000000);
	assert_int_equal(s.hits, 1);
	assert_int_equal(s.entries, 3);
	assert_int_equal(s.refetched, 1);
	assert_int_equal(s.slowest, 1);
	assert_float_equal(s.median_s, 0.75, 1e-12);
	assert_false(s.nodes[0].odd);
	stage_summary_format(&s, &line);
	assert_string_equal(line.buf, "3 nodes, 5.0 MB read from the source, 10.0 MB sent, 1/3 "
				      "hits, 1 fetched again, slowest node 1.25 s (n1)");
	j = stage_summary_json(&s);
	assert_int_equal(json_integer_value(json_object_get(j, "nodes")), 3);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "slowest"),
							      "node")), "n1");
	assert_int_equal(json_array_size(json_object_get(j, "per_node")), 3);
	json_decref(j);
	sbuf_release(&line);
	stage_summary_release(&s);
}

static void stage_summary__an_even_count_has_the_mean_of_the_middle_two(void **state)
{
	struct stage_summary s;

	(void)state;
	stage_summary_init(&s);
	add(&s, rec_n0);
	add(&s, rec_n1);
	stage_summary_finish(&s);
	assert_float_equal(s.median_s, 0.875, 1e-12);
	stage_summary_release(&s);
}

static void stage_summary__skips_torn_and_non_object_records(void **state)
{
	struct stage_summary s;
	struct sbuf line = SBUF_INIT;
	static const char *const bad[] = {
		"", "{\"node\": \"n0\", \"seconds\": 0.5, \"bytes_re", "[1, 2]", "null", "\"n0\"",
		"{\"seconds\": 1}", "{\"node\": 7}", "{\"node\": \"\"}",
		"{\"node\": \"n0\", \"seconds\": NaN}", /* not JSON: jansson refuses NaN */
		"{\"node\": \"n0\", \"node\": \"n1\"}", /* a duplicate key */
		"{\"node\": \"n0\", \"bytes_read\": 99999999999999999999999}", /* past int64 */
	};

	(void)state;
	stage_summary_init(&s);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		assert_int_equal(stage_summary_add(&s, bad[i], strlen(bad[i])), -1);
	add(&s, rec_n0);
	stage_summary_finish(&s);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.skipped, sizeof(bad) / sizeof(*bad));
	stage_summary_format(&s, &line);
	assert_string_equal(line.buf, "1 node, 5.0 MB read from the source, 10.0 MB sent, 0/1 hits, "
				      "slowest node 0.50 s (n0); 11 records skipped");
	sbuf_release(&line);
	stage_summary_release(&s);
}

static void stage_summary__odd_figures_count_as_unsaid_and_sums_saturate(void **state)
{
	struct stage_summary s;
	struct sbuf line = SBUF_INIT;
	json_t *j;

	(void)state;
	stage_summary_init(&s);
	/* missing fields, a negative count, a string, a huge time, an entry
	 * that is not an object, and a name that would redraw a terminal */
	add(&s, "{\"node\": \"evil\\u001b[2J\", \"seconds\": -1, \"bytes_read\": -5,"
		" \"bytes_sent\": \"many\", \"entries\": [7, {\"hit\": true}]}");
	add(&s, "{\"node\": \"nx\", \"seconds\": 1e308}");
	for (int i = 0; i < 3; i++) {
		char rec[300];

		snprintf(rec, sizeof(rec), "{\"node\": \"b%d\", \"seconds\": 2, \"bytes_read\": %lld}",
			 i, (long long)INT64_MAX);
		add(&s, rec);
	}
	stage_summary_finish(&s);
	assert_int_equal(s.n, 5);
	assert_true(s.nodes[3].odd); /* "evil..." sorts after "b2" */
	assert_true(isnan(s.nodes[3].seconds));
	assert_int_equal(s.nodes[3].bytes_read, 0);
	assert_int_equal(s.nodes[3].entries, 1);
	assert_int_equal(s.nodes[3].hits, 1);
	assert_true(s.bytes_read == UINT64_MAX);
	assert_string_equal(s.nodes[s.slowest].node, "nx");
	assert_float_equal(s.median_s, 2, 1e-12);
	stage_summary_format(&s, &line);
	assert_string_equal(line.buf, "5 nodes, 18.4 EB read from the source, 0 B sent, "
				      "1/1 hits, slowest node 1e+308 s (nx)");
	j = stage_summary_json(&s);
	assert_true(json_is_real(json_object_get(j, "bytes_read")));
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(j, "per_node"), 3),
						 "seconds")));
	json_decref(j);
	/* the escaped name, when it is the slowest */
	stage_summary_release(&s);
	sbuf_reset(&line);
	add(&s, "{\"node\": \"evil\\u001b[2J\", \"seconds\": 3}");
	stage_summary_finish(&s);
	stage_summary_format(&s, &line);
	assert_non_null(strstr(line.buf, "slowest node 3.00 s (evil\\x1b[2J)"));
	sbuf_release(&line);
	stage_summary_release(&s);
}

static void stage_summary__no_seconds_said_means_no_slowest_node(void **state)
{
	struct stage_summary s;
	struct sbuf line = SBUF_INIT;
	json_t *j;

	(void)state;
	stage_summary_init(&s);
	add(&s, "{\"node\": \"n0\"}");
	stage_summary_finish(&s);
	assert_int_equal(s.slowest, -1);
	assert_true(isnan(s.median_s));
	stage_summary_format(&s, &line);
	assert_string_equal(line.buf, "1 node, 0 B read from the source, 0 B sent, 0/0 hits");
	j = stage_summary_json(&s);
	assert_true(json_is_null(json_object_get(j, "slowest")));
	assert_true(json_is_null(json_object_get(j, "median_seconds")));
	json_decref(j);
	sbuf_release(&line);
	stage_summary_release(&s);
	/* no records: no line at all */
	stage_summary_finish(&s);
	stage_summary_format(&s, &line);
	assert_int_equal(line.len, 0);
	stage_summary_release(&s);
}

static void put(const char *rel, const char *text)
{
	char *p = testlib_tmp_at(rel);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(p, 0600), 0);
	free(p);
}

static void stage_summary__load_skips_links_fifos_and_directories(void **state)
{
	struct stage_summary s;
	char *dir = testlib_tmp_at("run/stage"), *p;

	(void)state;
	assert_int_equal(fileio_mkdirs(dir, 0700, NULL), 0);
	put("run/stage/n0.json", rec_n0);
	put("run/stage/n1.json", rec_n1);
	put("run/stage/torn.json", "{\"node\": \"n9\", \"sec");
	put("elsewhere.json", rec_n2);
	p = testlib_tmp_at("run/stage/link.json");
	assert_int_equal(symlink("../../elsewhere.json", p), 0);
	free(p);
	p = testlib_tmp_at("run/stage/fifo.json");
	assert_int_equal(mkfifo(p, 0600), 0);
	free(p);
	p = testlib_tmp_at("run/stage/dir.json");
	assert_int_equal(mkdir(p, 0700), 0);
	free(p);
	put("run/stage/n3.json.tmp", rec_n2); /* not a *.json name */
	p = testlib_tmp_at("run");
	stage_summary_load(p, &s);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.skipped, 4);
	assert_string_equal(s.nodes[1].node, "n1");
	stage_summary_release(&s);
	/* a run without stage/ has no records and no error */
	free(p);
	p = testlib_tmp_at("none");
	stage_summary_load(p, &s);
	assert_int_equal(s.n + s.skipped, 0);
	stage_summary_release(&s);
	free(p);
	free(dir);
}

static void data_read__says_the_rate_and_whether_the_copy_was_staged(void **state)
{
	struct data_read d = { 0 };
	struct sbuf line = SBUF_INIT;
	json_t *rec = json_loads("{\"event\":\"data\",\"path\":\"/c/n0/ab\",\"staged\":true,"
				 "\"bytes\":41200000,\"seconds\":0.05}", 0, NULL);
	json_t *j;

	(void)state;
	data_read_format(&d, &line);
	assert_int_equal(line.len, 0);
	data_read_take(&d, rec);
	assert_float_equal(data_read_rate(&d), 824e6, 1);
	data_read_format(&d, &line);
	assert_string_equal(line.buf, "data read at 824.0 MB/s from /c/n0/ab (staged): 41.2 MB in "
				      "0.0500 s");
	j = data_read_json(&d);
	assert_true(json_is_true(json_object_get(j, "staged")));
	assert_float_equal(json_real_value(json_object_get(j, "bytes_per_s")), 824e6, 1);
	json_decref(j);
	json_decref(rec);
	sbuf_release(&line);
}

static void data_read__odd_figures_give_no_rate_and_long_paths_are_cut(void **state)
{
	struct data_read d = { 0 };
	struct sbuf line = SBUF_INIT;
	char path[2000];
	json_t *rec, *j;

	(void)state;
	memset(path, 'a', sizeof(path) - 1);
	path[sizeof(path) - 1] = 0;
	rec = json_pack("{s:s, s:s, s:f, s:i}", "event", "data", "path", path, "bytes", -1.0,
			"seconds", 0);
	data_read_take(&d, rec);
	assert_true(isnan(data_read_rate(&d)));
	assert_int_equal(strlen(d.path), DATA_READ_PATH_MAX - 1);
	assert_string_equal(d.path + DATA_READ_PATH_MAX - 4, "...");
	data_read_format(&d, &line);
	assert_non_null(strstr(line.buf, "data read from aaa"));
	assert_non_null(strstr(line.buf, "... (source): - in 0.0000 s"));
	j = data_read_json(&d);
	assert_true(json_is_null(json_object_get(j, "bytes_per_s")));
	assert_true(json_is_null(json_object_get(j, "bytes")));
	json_decref(j);
	json_decref(rec);
	sbuf_release(&line);
}

static int setup(void **state)
{
	(void)state;
	return testlib_tmp_setup("test_stage_summary");
}

static int teardown(void **state)
{
	(void)state;
	return testlib_tmp_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stage_summary__sums_three_nodes_and_names_the_slowest),
		cmocka_unit_test(stage_summary__an_even_count_has_the_mean_of_the_middle_two),
		cmocka_unit_test(stage_summary__skips_torn_and_non_object_records),
		cmocka_unit_test(stage_summary__odd_figures_count_as_unsaid_and_sums_saturate),
		cmocka_unit_test(stage_summary__no_seconds_said_means_no_slowest_node),
		cmocka_unit_test(stage_summary__load_skips_links_fifos_and_directories),
		cmocka_unit_test(data_read__says_the_rate_and_whether_the_copy_was_staged),
		cmocka_unit_test(data_read__odd_figures_give_no_rate_and_long_paths_are_cut),
	};

	return cmocka_run_group_tests_name("test_stage_summary", tests, setup, teardown);
}
