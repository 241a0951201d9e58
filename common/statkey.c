/* statkey.c - the stat data a hash cache keys a file on (statkey.h).
 * Pure core. */
#include "common/statkey.h" // defines: struct statkey, statkey_*

#include <string.h>
#include <sys/stat.h>

void statkey_of(const struct stat *st, struct statkey *k)
{
	k->dev = (uint64_t)st->st_dev;
	k->ino = (uint64_t)st->st_ino;
	k->size = (uint64_t)st->st_size;
	k->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	k->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

bool statkey_is_equal(const struct statkey *a, const struct statkey *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

/* dev and ino are stored as their two's-complement int64: JSON integers
 * are signed, and only equality matters */
json_t *statkey_to_json(const struct statkey *k)
{
	return json_pack("[I, I, I, I, I]", (json_int_t)k->dev, (json_int_t)k->ino,
			 (json_int_t)k->size, (json_int_t)k->mtime_ns, (json_int_t)k->ctime_ns);
}

int statkey_from_json(const json_t *j, struct statkey *k)
{
	json_int_t v[5];

	memset(k, 0, sizeof(*k));
	if (!json_is_array(j) || json_array_size(j) != 5)
		return -1;
	for (size_t i = 0; i < 5; i++) {
		const json_t *e = json_array_get(j, i);

		if (!json_is_integer(e))
			return -1;
		v[i] = json_integer_value(e);
	}
	if (v[2] < 0)
		return -1;
	k->dev = (uint64_t)v[0];
	k->ino = (uint64_t)v[1];
	k->size = (uint64_t)v[2];
	k->mtime_ns = v[3];
	k->ctime_ns = v[4];
	return 0;
}
