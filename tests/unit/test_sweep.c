/* test_sweep.c - common/spec/sweep: the sweep: section, --sweep flags,
 * point order, and each point's problems reported at FILE:LINE:COL. */
#include "tests/unit/testlib.h"

#include "common/spec/sweep.h"
#include "common/spec/ynode.h"

#define SPEC \
	"version: 1\n" \
	"name: s\n" \
	"train: {epochs: 1}\n" \
	"sweep:\n" \
	"  max_parallel: 2\n" \
	"  train.optimizer.lr: [0.01, 0.05, 0.1]\n" \
	"  train.seed: [1, 2]\n"

struct parsed {
	int rc;
	struct sweep sw;
	struct diag_list dl;
	struct sbuf text;
};

static void parse(struct parsed *p, const char *spec, const char *const *flags, size_t n,
		  int zip)
{
	memset(p, 0, sizeof(*p));
	sbuf_init(&p->text);
	p->rc = sweep_parse("job.yaml", spec, strlen(spec), flags, n, zip, -1, &p->sw, &p->dl);
	for (size_t i = 0; i < p->dl.n; i++) {
		diag_format(&p->dl.v[i], &p->text);
		sbuf_addch(&p->text, '\n');
	}
}

static void parsed_release(struct parsed *p)
{
	sweep_release(&p->sw);
	diag_list_release(&p->dl);
	sbuf_release(&p->text);
}

static void assert_text(const struct sbuf *text, const char *want)
{
	if (!strstr(text->buf, want))
		fail_msg("no diagnostic\n  %s\namong\n%s", want, text->buf);
}

/* Point i loaded as submit loads it: the spec with the point's overrides. */
static void load_point(struct loaded *l, const char *spec, const struct sweep *sw, size_t i)
{
	struct sweep_point pt;

	memset(l, 0, sizeof(*l));
	sbuf_init(&l->text);
	sweep_point(sw, i, &pt);
	l->rc = spec_load("job.yaml", spec, strlen(spec), pt.v, pt.n, &l->job, &l->dl);
	for (size_t k = 0; k < l->dl.n; k++) {
		diag_format(&l->dl.v[k], &l->text);
		sbuf_addch(&l->text, '\n');
	}
	sweep_point_release(&pt);
}

static void sweep__grid_points_run_as_nested_loops(void **state)
{
	struct parsed p;
	struct loaded l;
	struct sbuf label = SBUF_INIT;

	(void)state;
	parse(&p, SPEC, NULL, 0, 0);
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.sw.naxes, 2);
	assert_int_equal(p.sw.max_parallel, 2);
	assert_int_equal(sweep_count(&p.sw), 6);
	/* the first axis outermost: lr 0.05 with seed 2 is point 3 */
	sweep_point_label(&p.sw, 3, &label);
	assert_string_equal(label.buf, "lr=0.05 seed=2");
	load_point(&l, SPEC, &p.sw, 3);
	assert_int_equal(l.rc, 0);
	assert_true(l.job.train.optimizer.lr == 0.05);
	assert_int_equal(l.job.train.seed, 2);
	assert_int_equal(l.job.train.epochs, 1);
	loaded_release(&l);
	sbuf_release(&label);
	parsed_release(&p);
}

static void sweep__zip_pairs_lists_and_flags_replace_axes(void **state)
{
	const char *const flags[] = { "train.seed=7,8,9", "train.batch_per_rank=[16, 32, '64']" };
	struct parsed p;
	struct loaded l;

	(void)state;
	parse(&p, SPEC, flags, 2, 1);
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.sw.mode, SWEEP_ZIP);
	assert_int_equal(p.sw.naxes, 3);
	assert_int_equal(sweep_count(&p.sw), 3);
	load_point(&l, SPEC, &p.sw, 2);
	assert_int_equal(l.rc, -1); /* '64' quoted: a string, not an integer */
	assert_text(&l.text, "--sweep train.batch_per_rank=[16, 32, '64']: train.batch_per_rank:");
	loaded_release(&l);
	load_point(&l, SPEC, &p.sw, 1);
	assert_int_equal(l.rc, 0);
	assert_true(l.job.train.optimizer.lr == 0.05);
	assert_int_equal(l.job.train.seed, 8);
	assert_int_equal(l.job.train.batch_per_rank, 32);
	loaded_release(&l);
	parsed_release(&p);
}

static void sweep__a_bad_point_is_reported_where_its_value_is(void **state)
{
	static const char spec[] = "version: 1\n"
				   "name: s\n"
				   "sweep:\n"
				   "  train.optimizer.lr: [0.1, -3]\n"
				   "  train.optimiser.momentum: [0.9]\n";
	struct parsed p;
	struct loaded l;

	(void)state;
	parse(&p, spec, NULL, 0, 0);
	assert_int_equal(p.rc, 0);
	load_point(&l, spec, &p.sw, 1);
	assert_int_equal(l.rc, -1);
	/* the value out of range, at its own line and column */
	assert_text(&l.text, "job.yaml:4:29: train.optimizer.lr:");
	/* the misspelt key, at the key in the sweep */
	assert_text(&l.text, "job.yaml:5:3: train: unknown key \"optimiser\"; did you mean \"optimizer\"?");
	loaded_release(&l);
	parsed_release(&p);
}

static void sweep__refuses_what_cannot_be_swept(void **state)
{
	static const char spec[] = "version: 1\n"
				   "name: s\n"
				   "sweep:\n"
				   "  mode: diagonal\n"
				   "  max_parallel: -1\n"
				   "  train.seed: []\n"
				   "  name: [a, b]\n"
				   "  train.epochs: 3\n"
				   "  train.batch_per_rank: [[1, 2]]\n"
				   "  bad key: [1]\n";
	const char *const flags[] = { "output.dir=a,b", "novalue" };
	struct parsed p;

	(void)state;
	parse(&p, spec, flags, 2, 0);
	assert_int_equal(p.rc, SWEEP_BAD_FLAG); /* "novalue": the command line first */
	assert_text(&p.text, "job.yaml:4:9: sweep.mode: expected grid or zip");
	assert_text(&p.text, "job.yaml:5:17: sweep.max_parallel: expected an integer 0..10000");
	assert_text(&p.text, "job.yaml:6:15: train.seed: an empty list: a sweep axis needs at least one value");
	assert_text(&p.text, "job.yaml:7:3: sweep: a sweep cannot vary name");
	assert_text(&p.text, "job.yaml:8:17: train.epochs: expected a list of values to sweep over, got a scalar");
	assert_text(&p.text, "job.yaml:9:26: train.batch_per_rank: a swept value must be a scalar");
	assert_text(&p.text, "job.yaml:10:3: sweep: \"bad key\" is not a key path");
	assert_text(&p.text, "--sweep output.dir=a,b: sweep: a sweep cannot vary output.dir");
	assert_text(&p.text, "--sweep novalue: expected KEY=V1,V2,... or KEY=[V1, V2]");
	parsed_release(&p);
}

/* A malformed flag is a usage error, apart from the spec's rules. */
static void sweep__a_malformed_flag_is_told_apart_from_a_refused_one(void **state)
{
	static const char *const bad[] = { "x", "=1,2", "train.seed=", "train.seed=1,,2",
					   "train.seed=1,2,", "train.seed=,1", "train.seed=[]",
					   "train.seed=[1,", "a b=1" };
	const char *const twice[] = { "train.seed=1,2", "train.seed=3,4" };
	const char *const refused[] = { "name=a,b" };
	struct parsed p;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		parse(&p, SPEC, &bad[i], 1, 0);
		assert_int_equal(p.rc, SWEEP_BAD_FLAG);
		parsed_release(&p);
	}
	parse(&p, SPEC, twice, 2, 0);
	assert_int_equal(p.rc, SWEEP_BAD_FLAG);
	assert_text(&p.text, "--sweep train.seed=3,4: train.seed is swept twice, also by "
		    "--sweep train.seed=1,2: give one --sweep per key");
	parsed_release(&p);
	parse(&p, SPEC, refused, 1, 0);
	assert_int_equal(p.rc, -1);
	parsed_release(&p);
}

/* A refusal quotes the flag clipped, not 100 KB of values. */
static void sweep__a_huge_flag_is_quoted_short(void **state)
{
	struct sbuf flag = SBUF_INIT;
	const char *flags[1];
	struct parsed p;

	(void)state;
	sbuf_addstr(&flag, "train.seed=1");
	for (int i = 2; i <= 20000; i++)
		sbuf_addf(&flag, ",%d", i);
	flags[0] = flag.buf;
	parse(&p, "version: 1\nname: s\n", flags, 1, 0);
	assert_int_equal(p.rc, -1);
	assert_true(p.text.len < 300);
	assert_text(&p.text, "... (");
	assert_text(&p.text, "the sweep has more than 10000 points");
	parsed_release(&p);
	sbuf_release(&flag);
}

static void sweep__zip_needs_lists_of_one_length(void **state)
{
	const char *const flags[] = { "train.seed=1,2,3,4" };
	struct parsed p;

	(void)state;
	parse(&p, SPEC, flags, 1, 1);
	assert_int_equal(p.rc, -1);
	assert_text(&p.text, "--sweep train.seed=1,2,3,4: train.seed: zip pairs lists of one length: this one has 4 values, train.optimizer.lr has 3");
	parsed_release(&p);
}

static void sweep__a_spec_without_one_has_no_axes(void **state)
{
	struct parsed p;
	struct loaded l;

	(void)state;
	parse(&p, MINIMAL, NULL, 0, 0);
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.sw.naxes, 0);
	assert_int_equal(sweep_count(&p.sw), 0);
	parsed_release(&p);
	/* spec_load sets the section aside: a sweep is no key of one job */
	load(&l, SPEC);
	assert_int_equal(l.rc, 0);
	assert_true(l.job.train.optimizer.lr != 0.01);
	loaded_release(&l);
}

static bool skip_seed(const char *key, const void *arg)
{
	return !strcmp(key, arg);
}

/* A record's point as status and report label it: keys by their last
 * part, strings bare, numbers as YAML typed them, skipped keys left out. */
static void sweep__labels_a_records_point_values(void **state)
{
	json_t *params = json_pack("{s:f, s:i, s:s, s:b}", "train.optimizer.lr", 0.05,
				   "train.seed", 2, "train.model", "cnn", "resources.exclusive", 1);
	struct sbuf out = SBUF_INIT;

	(void)state;
	sweep_params_label(params, NULL, NULL, &out);
	assert_string_equal(out.buf, "lr=0.05 seed=2 model=cnn exclusive=true");
	sbuf_reset(&out);
	sbuf_addstr(&out, "0 ");
	sweep_params_label(params, skip_seed, "train.seed", &out);
	assert_string_equal(out.buf, "0 lr=0.05 model=cnn exclusive=true");
	sbuf_release(&out);
	json_decref(params);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sweep__grid_points_run_as_nested_loops),
		cmocka_unit_test(sweep__zip_pairs_lists_and_flags_replace_axes),
		cmocka_unit_test(sweep__a_bad_point_is_reported_where_its_value_is),
		cmocka_unit_test(sweep__refuses_what_cannot_be_swept),
		cmocka_unit_test(sweep__a_malformed_flag_is_told_apart_from_a_refused_one),
		cmocka_unit_test(sweep__a_huge_flag_is_quoted_short),
		cmocka_unit_test(sweep__zip_needs_lists_of_one_length),
		cmocka_unit_test(sweep__a_spec_without_one_has_no_axes),
		cmocka_unit_test(sweep__labels_a_records_point_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
