/* probe_live.c - probe this machine once per boot, not once per rank.
 *
 * Shell.  Discovering PCI devices costs 10-30 ms, and every rank of every
 * job on a node asked the same question.  The first probe after a boot
 * exports its hwloc XML to a cache file; later probes load that file with
 * HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM (so binding works) and
 * ..._THISSYSTEM_ALLOWED_RESOURCES (so each process still sees its own
 * cgroup's CPUs, not the first prober's).  The key holds the boot id, the
 * uid, hwloc's version and PROBE_CACHE_VERSION: a reboot, another user or another hwloc never
 * reads a stale file.  Hot-plugged devices are not seen until the file
 * is removed or HPCTRAIN_TOPO_CACHE=off, and NUMA memory sizes stay those
 * of caching time: nothing here shows them (probe_load(NULL), which
 * `hpctrain topo` uses, probes afresh).
 *
 * HPCTRAIN_TOPO_CACHE: a directory for the cache (default /dev/shm, else
 * /tmp), or "off".  Failing to write the cache is never an error.
 *
 * /dev/shm and /tmp are everyone's: the file is read only when it is a
 * regular file of this user that no one else may write (never through a
 * link), and written with fileio_write_atomic (a mkstemp name, renamed),
 * never under a name another user could guess and plant a link at.
 */
#include "topology/probe.h"          // defines: probe_load_live
#include "topology/probe_internal.h" // defines: probe_open, probe_convert
#include "topology/topo.h"           // defines: struct node_topo
#include "common/diag.h"                // defines: struct diag_list
#include "common/fileio.h"              // defines: fileio_read_flags, fileio_write_atomic
#include "common/sbuf.h"                // defines: xasprintf, xstrdup

#include <hwloc/export.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <unistd.h>

/* Bumped whenever probe_open()'s flags or filters change what a topology
 * holds, so no file written by an older hpctrain is read.  2: the root's
 * CPU flags info. */
#define PROBE_CACHE_VERSION 2
/* A cached topology larger than this is not one we wrote. */
#define CACHE_MAX (256u << 20)

/* The cache file's path, or NULL when caching is off or impossible. */
static char *cache_path(void)
{
	const char *dir = getenv("HPCTRAIN_TOPO_CACHE");
	char boot[64] = "";
	FILE *fp;
	struct stat st;

	if (dir && !strcmp(dir, "off"))
		return NULL;
	if (!dir || !*dir)
		dir = !stat("/dev/shm", &st) && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
	fp = fopen("/proc/sys/kernel/random/boot_id", "r"); /* open-ok: /proc */
	if (!fp)
		return NULL;
	if (!fgets(boot, sizeof(boot), fp))
		boot[0] = '\0';
	fclose(fp);
	boot[strcspn(boot, "\n")] = '\0';
	if (!*boot)
		return NULL;
	return xasprintf("%s/hpctrain-topo-v%d-%u-%s-%x.xml", dir, PROBE_CACHE_VERSION,
			 (unsigned)getuid(), boot, hwloc_get_api_version());
}

/* Only our own regular file, never a link another user planted. */
static int load_cached(const char *path, struct node_topo *out, void **keep)
{
	struct diag_list ignored = DIAG_LIST_INIT;
	struct sbuf text = SBUF_INIT, why = SBUF_INIT;
	bool no_plugins = !getenv("HWLOC_PLUGINS_PATH");
	hwloc_topology_t topo;
	int rc = -1;

	if (fileio_read_flags(path, CACHE_MAX, FILEIO_NOFOLLOW | FILEIO_OWNED, &text, &why) ||
	    !text.len || text.len > CACHE_MAX)
		goto out_release;
	/* The XML already holds the PCI devices, and dlopen()ing hwloc's
	 * plugins (pci, opencl, gl, libxml) is 80% of this load's time.
	 * hwloc reads the variable when its first topology is created and
	 * again once all are gone, so a failed load below restores the
	 * plugins for the live probe that follows. */
	if (no_plugins)
		setenv("HWLOC_PLUGINS_PATH", "/nonexistent/hpctrain-no-hwloc-plugins", 1);
	if (probe_open(&topo, path, &ignored))
		goto out;
	/* the buffer, with sbuf's NUL, lives until probe_convert has loaded it */
	if (hwloc_topology_set_xmlbuffer(topo, text.buf, (int)text.len + 1) ||
	    hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED |
					   HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM |
					   HWLOC_TOPOLOGY_FLAG_THISSYSTEM_ALLOWED_RESOURCES)) {
		hwloc_topology_destroy(topo);
		goto out;
	}
	rc = probe_convert(topo, "live topology", true, out, (hwloc_topology_t *)keep, &ignored);
	if (!rc) {
		free(out->source);
		out->source = xstrdup("live");
	}
out:
	if (no_plugins)
		unsetenv("HWLOC_PLUGINS_PATH");
out_release:
	diag_list_release(&ignored);
	sbuf_release(&text);
	sbuf_release(&why);
	return rc;
}

/* Writes the topology to the cache file atomically, so a concurrent
 * reader sees the old file or the whole new one. */
static void store(hwloc_topology_t topo, const char *path)
{
	struct sbuf ignored = SBUF_INIT;
	char *buf = NULL;
	int len = 0;

	if (hwloc_topology_export_xmlbuffer(topo, &buf, &len, 0))
		return;
	if (len > 1) /* len counts the ending NUL */
		fileio_write_atomic(path, buf, (size_t)len - 1, 0600, 0, &ignored);
	hwloc_free_xmlbuffer(topo, buf);
	sbuf_release(&ignored);
}

int probe_load_live(struct node_topo *out, void **keep, struct diag_list *err)
{
	char *path = cache_path();
	hwloc_topology_t topo = NULL;
	int rc;

	topo_init(out);
	if (path && !load_cached(path, out, keep)) {
		free(path);
		return 0;
	}
	if (probe_open(&topo, "live topology", err)) {
		free(path);
		return -1;
	}
	rc = probe_convert(topo, "live topology", true, out, &topo, err);
	if (!rc && path)
		store(topo, path);
	if (!rc && keep)
		*keep = topo;
	else if (!rc)
		hwloc_topology_destroy(topo);
	free(path);
	return rc;
}

void probe_keep_release(void *keep)
{
	if (keep)
		hwloc_topology_destroy(keep);
}
