/* doctor_check.c - the checks one node makes of itself: NIC ports and
 * names, granted GPUs, free space, and a slot's binding read back.
 * Files are read below a root directory ("" is this machine), so unit
 * tests run the same code on recorded sysfs and /proc trees. */
#include "launcher/doctor/doctor.h"   // defines: doctor_check_nics, doctor_check_gpus
#include "launcher/rank/contract.h" // defines: contract_check_names
#include "common/fileio.h"     // defines: fileio_read
#include "common/sbuf.h"       // defines: struct sbuf, xstrdup, sbuf_clip

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

/* ROOT/rel; root "" or NULL is the real file system. */
static char *at_root(const char *root, const char *rel)
{
	struct sbuf sb = SBUF_INIT;

	sbuf_addf(&sb, "%s%s", root && strcmp(root, "/") ? root : "", rel);
	return sbuf_detach(&sb, NULL);
}

/* The first line of ROOT/rel, trimmed; NULL when unreadable. */
static char *read_line(const char *root, const char *rel)
{
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	char *path = at_root(root, rel), *line = NULL;

	if (!fileio_read(path, 4096, &text, &err)) {
		text.buf[strcspn(text.buf, "\n")] = '\0';
		line = xstrdup(text.buf);
	}
	free(path);
	sbuf_release(&text);
	sbuf_release(&err);
	return line;
}

/* The names in directory ROOT/rel, sorted; *n of them. */
static char **list_dir(const char *root, const char *rel, size_t *n)
{
	char *path = at_root(root, rel);
	struct dirent **ents = NULL;
	int k = scandir(path, &ents, NULL, alphasort);
	char **names = NULL;

	*n = 0;
	for (int i = 0; i < k; i++) {
		if (ents[i]->d_name[0] != '.') {
			names = xrealloc(names, (*n + 1) * sizeof(*names));
			names[(*n)++] = xstrdup(ents[i]->d_name);
		}
		free(ents[i]);
	}
	free(ents);
	free(path);
	return names;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The interfaces of this network namespace: /proc/net/dev follows the
 * reader's namespace, where /sys/class/net follows sysfs's mounter. */
static char **list_ifnames(const char *root, size_t *n)
{
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	char *path = at_root(root, "/proc/net/dev"), **names = NULL;
	const char *p;

	*n = 0;
	if (!fileio_read(path, 1 << 20, &text, &err))
		for (p = text.buf; (p = strchr(p, '\n')); ) {
			const char *name = p + 1 + strspn(p + 1, " "), *colon = strchr(name, ':');
			const char *eol = strchr(name, '\n');

			p++;
			if (!colon || (eol && colon > eol))
				continue;
			names = xrealloc(names, (*n + 1) * sizeof(*names));
			names[(*n)++] = xstrndup(name, (size_t)(colon - name));
		}
	free(path);
	sbuf_release(&text);
	sbuf_release(&err);
	return names;
}

/* "4: ACTIVE" for each port of an HCA; grade for a port that is not. */
static void check_hca_ports(const char *root, const char *hca, enum doctor_grade bad,
			    struct doctor_cell *out)
{
	struct sbuf rel = SBUF_INIT;
	size_t n;
	char **ports;

	sbuf_addf(&rel, "/sys/class/infiniband/%s/ports", hca);
	ports = list_dir(root, rel.buf, &n);
	if (!n)
		doctor_note(out, bad, "%s is not in /sys/class/infiniband", hca);
	for (size_t i = 0; i < n; i++) {
		char *state;

		sbuf_reset(&rel);
		sbuf_addf(&rel, "/sys/class/infiniband/%s/ports/%s/state", hca, ports[i]);
		state = read_line(root, rel.buf);
		if (!state)
			doctor_note(out, bad, "%s port %s has no state", hca, ports[i]);
		else if (!strstr(state, "ACTIVE"))
			doctor_note(out, bad, "%s port %s is %s", hca, ports[i],
				    strchr(state, ':') ? strchr(state, ':') + 1 + strspn(strchr(state, ':') + 1, " ") : state);
		free(state);
	}
	free_names(ports, n);
	sbuf_release(&rel);
}

static bool listed(const char *name, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], name))
			return true;
	return false;
}

static void check_ifname(const char *root, const char *ifname, char **have, size_t n_have,
			 struct doctor_cell *out)
{
	struct sbuf rel = SBUF_INIT;
	char *state;

	if (!listed(ifname, (const char *const *)have, n_have)) {
		doctor_note(out, DOCTOR_FAIL, "interface %s is not in this node's network", ifname);
		return;
	}
	sbuf_addf(&rel, "/sys/class/net/%s/operstate", ifname);
	state = read_line(root, rel.buf);
	/* "unknown" is what virtual and some IPoIB devices say when up */
	if (state && (!strcmp(state, "down") || !strcmp(state, "lowerlayerdown")))
		doctor_note(out, DOCTOR_FAIL, "interface %s is %s", ifname, state);
	free(state);
	sbuf_release(&rel);
}

/* The NCCL/UCX variables against the names the node has. */
static void check_env_names(const struct doctor_nic_input *in, char **hcas, size_t n_hcas,
			    char **ifs, size_t n_ifs, struct doctor_cell *out)
{
	json_t *warnings = json_array();
	const char **all = xmalloc((n_hcas + n_ifs + 1) * sizeof(*all));
	size_t i;
	json_t *w;

	memcpy(all, hcas, n_hcas * sizeof(*all));
	memcpy(all + n_hcas, ifs, n_ifs * sizeof(*all));
	contract_check_names("NCCL_IB_HCA", in->nccl_ib_hca, "InfiniBand/RoCE device",
			     (const char *const *)hcas, n_hcas, true, warnings);
	contract_check_names("NCCL_SOCKET_IFNAME", in->nccl_socket_ifname, "network interface",
			     (const char *const *)ifs, n_ifs, true, warnings);
	contract_check_names("UCX_NET_DEVICES", in->ucx_net_devices, "device or interface", all,
			     n_hcas + n_ifs, false, warnings);
	json_array_foreach(warnings, i, w)
		doctor_note(out, DOCTOR_FAIL, "%s", json_string_value(w));
	json_decref(warnings);
	free(all);
}

/* Does NCCL_IB_HCA pick hca (it will then carry the job's traffic)? */
static bool named_by_nccl(const char *hca, const char *value)
{
	bool exact = false;
	const char *p = value;

	if (!p || *p == '^')
		return false;
	if (*p == '=')
		exact = true, p++;
	while (*p) {
		size_t len = strcspn(p, ",:");

		if (len && !strncmp(hca, p, len) && (!exact || !hca[len]))
			return true;
		p += strcspn(p, ",");
		if (*p == ',')
			p++;
	}
	return false;
}

void doctor_check_nics(const char *root, const struct doctor_nic_input *in, struct doctor_cell *out)
{
	size_t n_hcas, n_ifs;
	char **hcas = list_dir(root, "/sys/class/infiniband", &n_hcas);
	char **ifs = list_ifnames(root, &n_ifs);

	out->grade = DOCTOR_OK;
	for (size_t i = 0; i < in->n_hcas; i++)
		check_hca_ports(root, in->hcas[i], DOCTOR_FAIL, out);
	for (size_t i = 0; i < n_hcas; i++)
		if (!listed(hcas[i], in->hcas, in->n_hcas))
			check_hca_ports(root, hcas[i],
					named_by_nccl(hcas[i], in->nccl_ib_hca) ? DOCTOR_FAIL : DOCTOR_WARN, out);
	for (size_t i = 0; i < in->n_ifnames; i++)
		check_ifname(root, in->ifnames[i], ifs, n_ifs, out);
	check_env_names(in, hcas, n_hcas, ifs, n_ifs, out);
	if (out->grade == DOCTOR_OK) {
		struct sbuf sb = SBUF_INIT;

		sbuf_addf(&sb, "%zu HCA(s) active, %zu interface(s)", n_hcas, n_ifs);
		doctor_note(out, DOCTOR_OK, "%s", sb.buf);
		sbuf_release(&sb);
	}
	free_names(hcas, n_hcas);
	free_names(ifs, n_ifs);
}

/* A decimal GPU index: digits only, below 2^20; -1 otherwise. */
static long gpu_index(const char *s, char **end)
{
	size_t n = strspn(s, "0123456789");
	long v = n && n < 8 ? strtol(s, NULL, 10) : -1;

	*end = (char *)s + n;
	return v < 1l << 20 ? v : -1;
}

/* Slurm's granted GPUs, "0,2" or "0-3": -1 for anything else (a sign,
 * blanks, a range that runs backwards, a trailing comma), which strtoul
 * would have read. */
static int parse_minors(const char *s, unsigned *v, size_t max)
{
	size_t n = 0;

	while (s && *s) {
		char *end;
		long a = gpu_index(s, &end), b = a;

		if (*end == '-')
			b = gpu_index(end + 1, &end);
		if (a < 0 || b < a || (*end && *end != ',') || (*end == ',' && !end[1]))
			return -1;
		for (long k = a; k <= b && n < max; k++)
			v[n++] = (unsigned)k;
		s = *end ? end + 1 : end;
	}
	return (int)n;
}

void doctor_check_gpus(const char *root, const char *granted, size_t topo_gpus, struct doctor_cell *out)
{
	unsigned minors[256];
	int n = parse_minors(granted, minors, 256);
	size_t n_driver;
	char **driver = list_dir(root, "/proc/driver/nvidia/gpus", &n_driver);
	char *drv = at_root(root, "/proc/driver/nvidia");

	if (n < 0) {
		char clip[SBUF_CLIP_SIZE];

		doctor_note(out, DOCTOR_WARN, "cannot read Slurm's GPU list '%s'",
			    sbuf_clip(granted, clip));
	} else if (!n && !topo_gpus && !n_driver) {
		doctor_note(out, DOCTOR_SKIP, "no GPU on this node, and none granted");
	} else if (access(drv, F_OK)) {
		doctor_note(out, DOCTOR_SKIP, "%d GPU(s) granted, %zu on the PCI bus, but no NVIDIA "
			    "driver (no /proc/driver/nvidia): cannot check them", n, topo_gpus);
	} else {
		out->grade = DOCTOR_OK;
		if ((size_t)n > n_driver)
			doctor_note(out, DOCTOR_FAIL, "Slurm granted %d GPU(s), the driver sees %zu",
				    n, n_driver);
		for (int i = 0; i < n; i++) {
			char rel[64], *path;
			int fd;

			/* encode-ok: 10 digits in 64 */
			snprintf(rel, sizeof(rel), "/dev/nvidia%u", minors[i]);
			path = at_root(root, rel);
			/* open-ok: a GPU's device node, opened to see that it opens */
			fd = open(path, O_RDWR | O_CLOEXEC);
			if (fd < 0)
				doctor_note(out, DOCTOR_FAIL, "granted GPU %u: cannot open %s: %s", minors[i],
					    rel, strerror(errno));
			else
				close(fd);
			free(path);
		}
		if (out->grade == DOCTOR_OK)
			doctor_note(out, DOCTOR_OK, "%d granted, %zu seen by the driver", n, n_driver);
	}
	free(drv);
	free_names(driver, n_driver);
}

/* A file made and removed: a read-only or full file system says so here
 * rather than at the first checkpoint. */
static int test_write(const char *dir, struct sbuf *why)
{
	struct sbuf path = SBUF_INIT;
	int fd, rc = 0;

	sbuf_addf(&path, "%s/.hpctrain-doctor-XXXXXX", dir);
	fd = mkostemp(path.buf, O_CLOEXEC); /* a random name: the scratch is shared */
	if (fd < 0 || write(fd, "x", 1) != 1 || fsync(fd)) {
		sbuf_addf(why, "cannot write in %s: %s", dir, strerror(errno));
		rc = -1;
	}
	if (fd >= 0) {
		close(fd);
		unlink(path.buf);
	}
	sbuf_release(&path);
	return rc;
}

void doctor_check_space(const char *what, const char *dir, double min_free_gb, struct doctor_cell *out)
{
	struct statvfs st;
	struct sbuf why = SBUF_INIT;
	uint64_t free_b, total_b;
	enum doctor_grade g;

	if (statvfs(dir, &st)) {
		doctor_note(out, DOCTOR_FAIL, "%s %s: %s", what, dir, strerror(errno));
		return;
	}
	free_b = (uint64_t)st.f_bavail * st.f_frsize;
	total_b = (uint64_t)st.f_blocks * st.f_frsize;
	g = doctor_grade_space(free_b, total_b, min_free_gb);
	doctor_note(out, g, "%s %s: %.1f GB free of %.1f", what, dir, (double)free_b / GIB,
		    (double)total_b / GIB);
	if (test_write(dir, &why))
		doctor_note(out, DOCTOR_FAIL, "%s", why.buf);
	sbuf_release(&why);
}
