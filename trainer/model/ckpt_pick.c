/* ckpt_pick.c - the checkpoint to resume from and the ones to prune or
 * retire, by what they record (see ckpt_pick.h).  Pure core. */
#include "trainer/model/ckpt_pick.h" // defines: struct ckpt_cand, ckpt_pick_*
#include "common/exitcode.h"         // defines: HPT_EXIT_NO_INPUT
#include "common/sbuf.h"             // defines: struct sbuf

#include <stdlib.h>
#include <string.h>

/* ckpt_save's "%012lld": twelve digits at least, a step of more grows it. */
#define CKPT_PICK_MIN_DIGITS 12

bool ckpt_pick_is_name(const char *name, int64_t *step)
{
	size_t digits;
	int64_t v = 0;

	if (strncmp(name, "ckpt-", 5))
		return false;
	digits = strspn(name + 5, "0123456789");
	if (digits < CKPT_PICK_MIN_DIGITS || digits > 18 || strcmp(name + 5 + digits, ".bin"))
		return false;
	for (size_t i = 0; i < digits; i++)
		v = v * 10 + (name[5 + i] - '0');
	if (step)
		*step = v;
	return true;
}

/* <0 when a is newer than b: the samples a version 3 header records,
 * then steps, then the path. */
static int newest_first(const void *pa, const void *pb)
{
	const struct ckpt_cand *a = pa, *b = pb;
	int av = a->head && a->version >= 3, bv = b->head && b->version >= 3;

	if (av != bv)
		return bv - av;
	if (av && a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	if (a->step != b->step)
		return a->step > b->step ? -1 : 1;
	return strcmp(b->path, a->path);
}

void ckpt_pick_sort(struct ckpt_cand *c, size_t n)
{
	if (n > 1) /* a run keeps a handful: qsort's cost is nothing here */
		qsort(c, n, sizeof(*c), newest_first);
}

int ckpt_pick(const struct ckpt_cand *c, size_t n,
	      int (*verify)(void *ctx, const struct ckpt_cand *c, struct sbuf *why), void *ctx,
	      size_t *chosen, struct sbuf *warn, struct sbuf *err)
{
	/* passed: a line for each file passed over, said when an older one
	 * verifies; older: the same for all but the newest, said when none
	 * does (the newest's why is then the error) */
	struct sbuf why = SBUF_INIT, first = SBUF_INIT, passed = SBUF_INIT, older = SBUF_INIT;
	int rc = 1;

	for (size_t i = 0; i < n; i++) {
		sbuf_reset(&why);
		rc = verify(ctx, &c[i], &why);
		if (!rc) {
			*chosen = i;
			sbuf_add(warn, passed.buf, passed.len);
			break;
		}
		if (rc != 1) {
			sbuf_add(err, why.buf, why.len);
			break;
		}
		sbuf_addf(&passed, "warning: %s; passed over for an older checkpoint\n", why.buf);
		if (i)
			sbuf_addf(&older, "warning: %s\n", why.buf);
		else
			sbuf_add(&first, why.buf, why.len);
	}
	if (rc == 1 && n) {
		sbuf_add(warn, older.buf, older.len);
		sbuf_add(err, first.buf, first.len);
		rc = HPT_EXIT_NO_INPUT;
	}
	sbuf_release(&why);
	sbuf_release(&first);
	sbuf_release(&passed);
	sbuf_release(&older);
	return rc;
}

void ckpt_pick_prune(const struct ckpt_cand *c, size_t n, int64_t global_batch, int keep,
		     enum ckpt_fate *fate)
{
	int kept = 0;

	for (size_t i = 0; i < n; i++) {
		if (c[i].head && c[i].global_batch && global_batch &&
		    c[i].global_batch != global_batch)
			fate[i] = CKPT_RETIRE;
		else
			fate[i] = kept++ < keep ? CKPT_KEEP : CKPT_REMOVE;
	}
}

void ckpt_cands_release(struct ckpt_cand *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++)
		free(c[i].path);
	free(c);
}
