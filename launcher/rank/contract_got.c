/* contract_got.c - what this process really got, for contract_check:
 * its CPU affinity, the NUMA nodes its cgroup allows, the environment
 * the program will see, and the node's network interfaces.
 * Shell (sched_getaffinity, /proc/self/status, if_nameindex). */
#include "launcher/rank/contract.h" // defines: struct contract_got, contract_got_read
#include "common/fileio.h"     // defines: fileio_read
#include "common/sbuf.h"       // defines: struct sbuf, xstrdup

#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

static void read_cpus(struct contract_got *got)
{
	cpu_set_t *set;
	size_t n = 4096, bytes = CPU_ALLOC_SIZE(n);

	set = CPU_ALLOC(n);
	if (!set)
		return;
	if (!sched_getaffinity(0, bytes, set)) {
		for (size_t i = 0; i < n && i < BITMAP_MAX_BIT; i++)
			if (CPU_ISSET_S(i, bytes, set))
				bitmap_set(&got->cpus, (unsigned)i);
		got->have_cpus = true;
	}
	CPU_FREE(set);
}

/* "Mems_allowed_list:\t0-1" of /proc/self/status. */
static void read_mems(struct contract_got *got)
{
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	const char *p;

	if (!fileio_read("/proc/self/status", 1 << 16, &text, &err) &&
	    (p = strstr(text.buf, "\nMems_allowed_list:"))) {
		char *line = xstrdup(p + strlen("\nMems_allowed_list:"));

		line[strcspn(line, "\n")] = '\0';
		got->have_mems = !bitmap_parse_list(&got->mems, line + strspn(line, " \t"));
		free(line);
	}
	sbuf_release(&text);
	sbuf_release(&err);
}

void contract_got_read_ifnames(struct contract_got *got)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	const char **names = NULL;
	size_t n = 0;

	for (i = ifs; i && i->if_index; i++) {
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = xstrdup(i->if_name);
	}
	if (ifs)
		if_freenameindex(ifs);
	got->ifnames = names;
	got->n_ifnames = n;
}

void contract_got_read(struct contract_got *got)
{
	memset(got, 0, sizeof(*got));
	bitmap_init(&got->cpus);
	bitmap_init(&got->mems);
	read_cpus(got);
	read_mems(got);
	contract_got_read_ifnames(got);
	got->cuda_visible_devices = getenv("CUDA_VISIBLE_DEVICES");
	got->nccl_ib_hca = getenv("NCCL_IB_HCA");
	got->nccl_socket_ifname = getenv("NCCL_SOCKET_IFNAME");
	got->ucx_net_devices = getenv("UCX_NET_DEVICES");
}

void contract_got_release(struct contract_got *got)
{
	bitmap_release(&got->cpus);
	bitmap_release(&got->mems);
	for (size_t i = 0; i < got->n_ifnames; i++)
		free((char *)got->ifnames[i]);
	free((void *)got->ifnames);
	got->ifnames = NULL;
	got->n_ifnames = 0;
}
