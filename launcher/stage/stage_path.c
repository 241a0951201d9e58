/* stage_path.c - paths of the node cache and of staged data (see
 * stage_path.h).  Pure core: no getenv, no file system. */
#include "launcher/stage/stage_path.h"     // defines: stage_cache_dir, stage_entry_*
#include "launcher/stage/stage_manifest.h" // defines: stage_manifest_hex
#include "common/sbuf.h"                   // defines: struct sbuf, xasprintf
#include "common/spec/spec.h"              // defines: struct job

#include <stdlib.h>
#include <string.h>

char *stage_cache_dir(const char *cache_dir, const char *to, const char *preflight_scratch,
		      const char *tmpdir, unsigned uid)
{
	const char *base = to;
	size_t n;

	if (cache_dir && *cache_dir)
		return xstrdup(cache_dir);
	if (!base || !*base || !strcmp(base, "auto")) {
		if (preflight_scratch && *preflight_scratch)
			base = preflight_scratch;
		else if (tmpdir && *tmpdir)
			base = tmpdir;
		else
			base = "/dev/shm";
	}
	n = strlen(base);
	while (n > 1 && base[n - 1] == '/')
		n--;
	return xasprintf("%.*s/hpctrain-cache-%u", (int)n, base, uid);
}

char *stage_job_cache_dir(const struct job *job, const char *tmpdir, unsigned uid)
{
	return stage_cache_dir(job->data.cache_dir, job->data.to, job->preflight.scratch, tmpdir,
			       uid);
}

char *stage_pycache_dir(const char *cache)
{
	return xasprintf("%s/pycache", cache);
}

char *stage_entry_dir(const char *cache, const char *manifest_hash)
{
	const char *hex = stage_manifest_hex(manifest_hash);

	return hex ? xasprintf("%s/%s", cache, hex) : NULL;
}

char *stage_path_basename(const char *src)
{
	size_t n = strlen(src), k;

	while (n > 0 && src[n - 1] == '/')
		n--;
	k = n;
	while (k > 0 && src[k - 1] != '/')
		k--;
	if (k == n)
		return xstrdup("data");
	return xstrndup(src + k, n - k);
}

char *stage_entry_data_path(const char *cache, const char *manifest_hash, const char *src,
			    bool is_file)
{
	char *dir = stage_entry_dir(cache, manifest_hash), *base, *out;

	if (!dir || !is_file)
		return dir;
	base = stage_path_basename(src);
	out = xasprintf("%s/%s", dir, base);
	free(base);
	free(dir);
	return out;
}

char *stage_path_expand(const char *pattern, const char *node)
{
	struct sbuf sb = SBUF_INIT;

	for (const char *p = pattern; *p; p++) {
		if (p[0] == '%' && p[1] == 'n') {
			sbuf_addstr(&sb, node);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			sbuf_addch(&sb, '%');
			p++;
		} else {
			sbuf_addch(&sb, *p);
		}
	}
	return sbuf_detach(&sb, NULL);
}
