/* trainlib.h - helpers for the trainer's unit tests: random arrays,
 * closeness checks and the reader of the .bin files of tests/fixtures/torch (format in
 * tests/torch/make_fixtures.py).  Header only. */
#ifndef HPT_TRAINLIB_H
#define HPT_TRAINLIB_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "trainer/model/rng.h"

#ifndef FIXTURE_DIR
#define FIXTURE_DIR "tests/fixtures/torch"
#endif

static inline void fill_normal(double *v, size_t n, uint64_t seed)
{
	struct rng r;

	rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++)
		v[i] = rng_normal(&r);
}

static inline void fill_normalf(float *v, size_t n, uint64_t seed)
{
	struct rng r;

	rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++)
		v[i] = (float)rng_normal(&r);
}

/* Fails with the first index where |a - b| > atol + rtol |b|. */
#define assert_close(a, b, n, atol, rtol) assert_close_(a, b, n, atol, rtol, #a, __FILE__, __LINE__)
static inline void assert_close_(const float *a, const float *b, size_t n, double atol,
				 double rtol, const char *what, const char *file, int line)
{
	for (size_t i = 0; i < n; i++)
		if (!(fabs((double)a[i] - b[i]) <= atol + rtol * fabs((double)b[i]))) {
			print_error("%s[%zu] = %.9g, expected %.9g\n", what, i, a[i], b[i]);
			_fail(file, line);
		}
}

struct fixture {
	char name[64];
	int ndim;
	uint32_t dims[8];
	size_t n;
	float *data;
};

struct fixture_file {
	struct fixture *v;
	size_t n;
};

static inline void fixture_load(struct fixture_file *ff, const char *file)
{
	char path[512];
	FILE *fp;
	uint32_t len;

	snprintf(path, sizeof(path), "%s/%s", FIXTURE_DIR, file);
	fp = fopen(path, "rb");
	if (!fp)
		fail_msg("cannot open fixture %s", path);
	memset(ff, 0, sizeof(*ff));
	while (fread(&len, 4, 1, fp) == 1) {
		struct fixture *f;

		ff->v = realloc(ff->v, (ff->n + 1) * sizeof(*ff->v));
		f = &ff->v[ff->n++];
		memset(f, 0, sizeof(*f));
		assert_true(len < sizeof(f->name));
		assert_int_equal(fread(f->name, 1, len, fp), len);
		assert_int_equal(fread(&f->ndim, 4, 1, fp), 1);
		assert_true(f->ndim <= 8);
		if (f->ndim)
			assert_int_equal(fread(f->dims, 4, f->ndim, fp), f->ndim);
		f->n = 1;
		for (int i = 0; i < f->ndim; i++)
			f->n *= f->dims[i];
		f->data = malloc(f->n * sizeof(float) + 1);
		assert_int_equal(fread(f->data, sizeof(float), f->n, fp), f->n);
	}
	fclose(fp);
}

static inline const struct fixture *fixture_get(const struct fixture_file *ff, const char *name)
{
	for (size_t i = 0; i < ff->n; i++)
		if (!strcmp(ff->v[i].name, name))
			return &ff->v[i];
	fail_msg("fixture has no tensor %s", name);
	return NULL;
}

static inline void fixture_release(struct fixture_file *ff)
{
	for (size_t i = 0; i < ff->n; i++)
		free(ff->v[i].data);
	free(ff->v);
	memset(ff, 0, sizeof(*ff));
}

#endif
