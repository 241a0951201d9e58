/* test_probe.c - hwloc XML and the live machine -> struct node_topo, on
 * every fixture: devices, their order and places, CPU flags, caches and
 * exports, and hostile input. */
#include "tests/unit/topolib.h"
#include "topology/bitmap.h"    // defines: bitmap_*
#include "topology/pathclass.h" // defines: pathclass_between, pathclass_name
#include "topology/cpufeat.h"   // defines: cpufeat_parse

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void nearest(const struct node_topo *t, size_t g, struct sbuf *out)
{
	enum pathclass best = PATHCLASS_SYS;
	bool first = true;

	for (size_t i = 0; i < t->n_nics; i++) {
		enum pathclass c = pathclass_between(t, &t->gpus[g].pci, &t->nics[i].pci);

		if (c < best)
			best = c;
	}
	for (size_t i = 0; i < t->n_nics; i++)
		if (pathclass_between(t, &t->gpus[g].pci, &t->nics[i].pci) == best) {
			sbuf_addf(out, "%s%s", first ? "" : ",", topo_nic_name(&t->nics[i]));
			first = false;
		}
	sbuf_addf(out, " %s", pathclass_name(best));
}

static void probe__finds_gpus_nics_numa_and_nearest_nics_on_every_fixture(void **state)
{
	(void)state;
	for (size_t f = 0; f < N_FIXTURES; f++) {
		const struct expect *e = &fixtures[f];
		struct node_topo t;

		load(e->file, &t);
		if (t.n_gpus != e->gpus || t.n_nics != e->nics)
			fail_msg("%s: %zu gpus, %zu nics; want %zu, %zu", e->file,
				 t.n_gpus, t.n_nics, e->gpus, e->nics);
		for (size_t g = 0; g < t.n_gpus; g++) {
			struct sbuf sb = SBUF_INIT;

			assert_true(t.gpus[g].numa >= 0);
			if ((int)t.numa[t.gpus[g].numa].os_index != e->gpu_numa[g])
				fail_msg("%s: gpu %zu on numa %u, want %d", e->file, g,
					 t.numa[t.gpus[g].numa].os_index, e->gpu_numa[g]);
			if (t.n_nics) {
				nearest(&t, g, &sb);
				if (strcmp(sb.buf, e->nearest[g]))
					fail_msg("%s: gpu %zu nearest \"%s\", want \"%s\"", e->file,
						 g, sb.buf, e->nearest[g]);
			}
			sbuf_release(&sb);
		}
		topo_release(&t);
	}
}

static void probe__orders_gpus_and_nics_by_pci_bus_id(void **state)
{
	(void)state;
	for (size_t f = 0; f < N_FIXTURES; f++) {
		struct node_topo t;

		load(fixtures[f].file, &t);
		for (size_t i = 1; i < t.n_gpus; i++)
			assert_true(strcmp(t.gpus[i - 1].pci.busid, t.gpus[i].pci.busid) < 0);
		for (size_t i = 1; i < t.n_nics; i++)
			assert_true(strcmp(t.nics[i - 1].pci.busid, t.nics[i].pci.busid) < 0);
		topo_release(&t);
	}
}

static void probe__describes_cores_numa_nodes_and_packages(void **state)
{
	struct node_topo t;
	struct sbuf sb = SBUF_INIT;

	(void)state;
	load("256amd64-8n16c2t-dgxa100.xml", &t);
	assert_int_equal(t.n_packages, 2);
	assert_int_equal(t.n_numa, 8);
	assert_int_equal(t.n_cores, 128);
	assert_int_equal(t.n_l3, 32);
	assert_int_equal(bitmap_count(&t.cpuset), 256);
	assert_true(bitmap_equal(&t.cpuset, &t.allowed));
	bitmap_format_list(&t.numa[3].cpuset, &sb);
	assert_string_equal(sb.buf, "48-63,176-191");
	assert_int_equal(t.numa[3].memory, 128ULL << 30);
	assert_int_equal(t.numa[3].package, 0);
	/* core 48 = CPUs 48 and 176, NUMA node 3, third CCX of that node */
	sbuf_reset(&sb);
	bitmap_format_list(&t.cores[48].pus, &sb);
	assert_string_equal(sb.buf, "48,176");
	assert_int_equal(t.cores[48].numa, 3);
	assert_int_equal(t.cores[48].l3, 12);
	assert_int_equal(t.cores[51].l3, 12);
	assert_int_equal(t.cores[52].l3, 13);
	assert_string_equal(t.packages[1].model, "AMD EPYC 7742 64-Core Processor");
	sbuf_release(&sb);
	topo_release(&t);
}

static void probe__counts_one_gpu_per_pci_device_whatever_its_os_devices(void **state)
{
	struct node_topo t;

	(void)state;
	load("32em64t-2n8c2t-pci-wholeio.xml", &t);
	/* 84:00.0 has cuda0 and card0: one GPU, both names kept */
	assert_string_equal(t.gpus[2].pci.busid, "0000:84:00.0");
	assert_int_equal(t.gpus[2].n_osdevs, 2);
	assert_string_equal(t.gpus[2].osdevs[0], "cuda0");
	assert_string_equal(t.gpus[2].osdevs[1], "card0");
	assert_string_equal(t.gpus[2].model, "Tesla K40m");
	/* 03:00.0 has no OS device: a 3D controller from NVIDIA still counts */
	assert_int_equal(t.gpus[0].n_osdevs, 0);
	assert_int_equal(t.gpus[0].pci.class_id, 0x0302);
	topo_release(&t);
}

static void probe__ignores_bmc_displays_and_nvswitches(void **state)
{
	struct node_topo t;

	(void)state;
	/* ASPEED VGA with a DRM card0, six A100 NVSwitches */
	load("256amd64-8n16c2t-dgxa100.xml", &t);
	for (size_t i = 0; i < t.n_gpus; i++) {
		assert_int_equal(t.gpus[i].pci.vendor, 0x10de);
		assert_int_equal(t.gpus[i].pci.class_id, 0x0302);
	}
	topo_release(&t);
	/* the ATI ES1000 (1002:515e, VGA) of a server board is not a GPU */
	load("24em64t-2n6c2t-pci.xml", &t);
	for (size_t i = 0; i < t.n_gpus; i++)
		assert_int_equal(t.gpus[i].pci.vendor, 0x10de);
	topo_release(&t);
	/* DGX-2 NVSwitches carry hwloc's NVSwitch subtype, one with class 0000 */
	load("nvidiaDGX2.xml", &t);
	assert_int_equal(t.n_gpus, 16);
	topo_release(&t);
}

static void probe__does_not_count_sr_iov_virtual_functions_as_nics(void **state)
{
	struct node_topo t;

	(void)state;
	load("144em64t-4n18c2t-snc2-cpuonly.xml", &t);
	assert_int_equal(t.n_nics, 1);
	assert_string_equal(topo_nic_name(&t.nics[0]), "mlx5_0");
	topo_release(&t);
	/* usNIC functions without OS devices are not NICs either */
	load("16intel64-manyVFs.xml", &t);
	assert_int_equal(t.n_nics, 6);
	assert_string_equal(topo_nic_name(&t.nics[2]), "usnic_0");
	topo_release(&t);
}

static void probe__keeps_uuid_os_devices_and_nic_port_attributes(void **state)
{
	struct node_topo t;
	bool lid = false, addr = false;

	(void)state;
	load("224em64t-2n56c2t-dgxh100.xml", &t);
	assert_non_null(t.gpus[0].uuid);
	assert_string_equal(t.gpus[0].uuid, "GPU-5eed0000-1f2e-4d3c-8b4a-000100000000");
	assert_string_equal(t.gpus[0].model, "NVIDIA H100 80GB HBM3");
	assert_int_equal(t.gpus[0].n_osdevs, 2);
	assert_string_equal(t.gpus[0].osdevs[1], "nvml0");
	assert_int_equal(t.nics[0].n_ofed, 1);
	assert_int_equal(t.nics[0].n_net, 1);
	assert_string_equal(t.nics[0].net[0], "ibp19s0");
	for (size_t i = 0; i < t.nics[0].n_attrs; i++) {
		lid |= !strcmp(t.nics[0].attrs[i].name, "mlx5_0:Port1LID");
		addr |= !strcmp(t.nics[0].attrs[i].name, "ibp19s0:Address");
	}
	assert_true(lid && addr);
	assert_true(t.nics[0].pci.link_gbps > 60.0f);
	topo_release(&t);
}

static void probe__reports_a_missing_file_in_a_diagnostic(void **state)
{
	struct diag_list err = DIAG_LIST_INIT;
	struct node_topo t;

	(void)state;
	assert_int_equal(probe_load("/nonexistent/node.xml", &t, &err), -1);
	assert_int_equal(err.n, 1);
	assert_string_equal(err.v[0].where, "/nonexistent/node.xml");
	assert_non_null(strstr(err.v[0].msg, "cannot open"));
	topo_release(&t);
	diag_list_release(&err);
}

static void probe__survives_truncated_and_corrupted_xml(void **state)
{
	char *path = fixture_path("32em64t-2n8c2t-pci-wholeio.xml");
	FILE *fp = fopen(path, "rb");
	static const char *const junk[] = {
		"", "<", "not xml at all", "<?xml version=\"1.0\"?><topology version=\"2.0\"></topology>",
		"<topology version=\"2.0\"><object type=\"Machine\" cpuset=\"0xffffffff,,,\">",
		"<topology version=\"2.0\"><object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" "
		"complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\"><object type=\"PU\" "
		"os_index=\"99999999\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" "
		"complete_nodeset=\"0x1\"/></object></topology>",
	};
	char *buf;
	long len;

	(void)state;
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	rewind(fp);
	buf = xmalloc((size_t)len);
	assert_int_equal(fread(buf, 1, (size_t)len, fp), (size_t)len);
	fclose(fp);
	/* Every prefix length class: cut inside tags, attributes and values,
	 * and flip bytes; the probe must either load or fail cleanly. */
	for (long cut = 0; cut < len; cut += 997) {
		struct diag_list err = DIAG_LIST_INIT;
		struct node_topo t;
		int rc = probe_load_xml_buffer(buf, (size_t)cut, "cut", &t, &err);

		assert_true(rc == 0 || err.n == 1);
		topo_release(&t);
		diag_list_release(&err);
	}
	for (long at = 100; at < len; at += 1499) {
		struct diag_list err = DIAG_LIST_INIT;
		struct node_topo t;
		char saved = buf[at];
		int rc;

		buf[at] = (char)(saved ^ 0x5a);
		rc = probe_load_xml_buffer(buf, (size_t)len, "flip", &t, &err);
		assert_true(rc == 0 || err.n == 1);
		buf[at] = saved;
		topo_release(&t);
		diag_list_release(&err);
	}
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		struct diag_list err = DIAG_LIST_INIT;
		struct node_topo t;

		assert_int_equal(probe_load_xml_buffer(junk[i], strlen(junk[i]), "junk", &t, &err), -1);
		assert_int_equal(err.n, 1);
		topo_release(&t);
		diag_list_release(&err);
	}
	free(buf);
	free(path);
}

static void probe__loads_the_live_machine_with_at_least_one_core(void **state)
{
	struct diag_list err = DIAG_LIST_INIT;
	struct node_topo t;
	int rc;

	(void)state;
	leaks_ignore_begin();
	rc = probe_load(NULL, &t, &err);
	leaks_ignore_end();
	if (rc) {
		diag_report(stderr, &err);
		fail();
	}
	assert_true(t.n_cores >= 1);
	assert_false(bitmap_is_empty(&t.allowed));
	assert_true(bitmap_is_subset(&t.allowed, &t.cpuset));
	assert_string_equal(t.source, "live");
	topo_release(&t);
	diag_list_release(&err);
}

/* hwloc XML has no CPU flags: only files saved by hpctrain carry them (the
 * -cpuflags fixtures); any other file's features stay unknown. */
static void probe__reads_cpu_flags_only_where_the_xml_saved_them(void **state)
{
	struct node_topo a, b;

	(void)state;
	for (size_t f = 0; f < N_FIXTURES; f++) {
		load(fixtures[f].file, &a);
		assert_null(a.cpu_flags);
		topo_release(&a);
	}
	load("224em64t-2n56c2t-dgxh100-cpuflags.xml", &a);
	assert_non_null(a.cpu_flags);
	/* a Sapphire Rapids: every feature but AMX-FP16 (Granite Rapids') */
	assert_int_equal(cpufeat_parse(a.cpu_flags), CPUFEAT_ALL & ~CPUFEAT_AMX_FP16);
	load("224em64t-2n56c2t-dgxh100.xml", &b);
	assert_true(topo_fingerprint(&a) == topo_fingerprint(&b));
	topo_release(&a);
	topo_release(&b);
	load("144em64t-4n18c2t-snc2-cpuonly-cpuflags.xml", &a);
	assert_int_equal(cpufeat_parse(a.cpu_flags), CPUFEAT_AVX2 | CPUFEAT_FMA | CPUFEAT_AVX512F);
	topo_release(&a);
}

static void load_live(struct node_topo *t, bool cached)
{
	struct diag_list err = DIAG_LIST_INIT;
	int rc;

	leaks_ignore_begin();
	rc = cached ? probe_load_live(t, NULL, &err) : probe_load(NULL, t, &err);
	leaks_ignore_end();
	if (rc) {
		diag_report(stderr, &err);
		fail();
	}
	diag_list_release(&err);
}

/* The live flags agree with what the compiler's cpuid check sees, and
 * survive an export (and a re-export) and the per-boot cache. */
static void probe__keeps_live_cpu_flags_through_export_and_cache(void **state)
{
	struct diag_list err = DIAG_LIST_INIT;
	char dir[] = "/tmp/hpt-test-cache-XXXXXX";
	struct node_topo live, back;
	char *xml, *xml2, *cache;
	unsigned have;

	(void)state;
	load_live(&live, false);
#if defined(__x86_64__) && defined(__linux__)
	assert_non_null(live.cpu_flags);
	have = cpufeat_parse(live.cpu_flags);
	assert_int_equal(!!(have & CPUFEAT_AVX2), !!__builtin_cpu_supports("avx2"));
	assert_int_equal(!!(have & CPUFEAT_FMA), !!__builtin_cpu_supports("fma"));
	assert_int_equal(!!(have & CPUFEAT_AVX512F), !!__builtin_cpu_supports("avx512f"));
#else
	(void)have;
	if (!live.cpu_flags)
		skip();
#endif
	assert_non_null(mkdtemp(dir));
	xml = xasprintf("%s/me.xml", dir);
	xml2 = xasprintf("%s/again.xml", dir);
	leaks_ignore_begin();
	assert_int_equal(probe_export_xml(NULL, xml, &err), 0);
	leaks_ignore_end();
	assert_int_equal(probe_export_xml(xml, xml2, &err), 0);
	assert_int_equal(probe_load(xml2, &back, &err), 0);
	assert_string_equal(back.cpu_flags, live.cpu_flags);
	topo_release(&back);

	/* a miss writes the cache, a hit reads the flags back from it */
	setenv("HPCTRAIN_TOPO_CACHE", dir, 1);
	load_live(&back, true);
	assert_string_equal(back.cpu_flags, live.cpu_flags);
	topo_release(&back);
	load_live(&back, true);
	assert_string_equal(back.cpu_flags, live.cpu_flags);
	topo_release(&back);
	unsetenv("HPCTRAIN_TOPO_CACHE");
	cache = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cache), 0);
	free(cache);
	free(xml);
	free(xml2);
	topo_release(&live);
	diag_list_release(&err);
}

/* The per-boot cache keeps memory sizes as they were; probe_load(NULL),
 * which `hpctrain topo` shows, reads the machine as it is now. */
static void probe__live_load_ignores_a_stale_cache(void **state)
{
	char dir[] = "/tmp/hpt-test-cache-XXXXXX";
	struct node_topo fresh, cached;
	char *cmd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	setenv("HPCTRAIN_TOPO_CACHE", dir, 1);
	load_live(&cached, true);
	topo_release(&cached);
	cmd = xasprintf("sed -i -E '0,/local_memory=\"[0-9]+\"/s//local_memory=\"4096\"/' "
			"'%s'/hpctrain-topo-v*.xml", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	load_live(&cached, true);
	assert_true(cached.n_numa >= 1);
	assert_true(cached.numa[0].memory == 4096);
	load_live(&fresh, false);
	assert_true(fresh.numa[0].memory > 4096);
	topo_release(&cached);
	topo_release(&fresh);
	unsetenv("HPCTRAIN_TOPO_CACHE");
	cmd = xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

/* Re-exporting a file never adds this machine's flags to another's. */
static void probe__reexport_never_adds_this_machines_flags(void **state)
{
	struct diag_list err = DIAG_LIST_INIT;
	char *in = fixture_path("24em64t-2n6c2t-pci.xml");
	char *in2 = fixture_path("144em64t-4n18c2t-snc2-cpuonly-cpuflags.xml");
	char out[] = "/tmp/hpt-test-export-XXXXXX";
	struct node_topo t, want;
	int fd = mkstemp(out);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(probe_export_xml(in, out, &err), 0);
	assert_int_equal(probe_load(out, &t, &err), 0);
	assert_null(t.cpu_flags);
	topo_release(&t);
	assert_int_equal(probe_export_xml(in2, out, &err), 0);
	assert_int_equal(probe_load(out, &t, &err), 0);
	load("144em64t-4n18c2t-snc2-cpuonly-cpuflags.xml", &want);
	assert_string_equal(t.cpu_flags, want.cpu_flags);
	topo_release(&t);
	topo_release(&want);
	unlink(out);
	free(in);
	free(in2);
	diag_list_release(&err);
}

static void probe__exports_xml_that_loads_back_the_same(void **state)
{
	struct diag_list err = DIAG_LIST_INIT;
	char *in = fixture_path("256amd64-8n16c2t-dgxa100.xml");
	char out[] = "/tmp/hpt-test-export-XXXXXX";
	struct node_topo a, b;
	int fd = mkstemp(out);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(probe_export_xml(in, out, &err), 0);
	load("256amd64-8n16c2t-dgxa100.xml", &a);
	assert_int_equal(probe_load(out, &b, &err), 0);
	assert_true(topo_fingerprint(&a) == topo_fingerprint(&b));
	assert_int_equal(probe_export_xml(in, "/nonexistent/dir/x.xml", &err), -1);
	assert_int_equal(err.n, 1);
	topo_release(&a);
	topo_release(&b);
	unlink(out);
	free(in);
	diag_list_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(probe__finds_gpus_nics_numa_and_nearest_nics_on_every_fixture),
		cmocka_unit_test(probe__orders_gpus_and_nics_by_pci_bus_id),
		cmocka_unit_test(probe__describes_cores_numa_nodes_and_packages),
		cmocka_unit_test(probe__counts_one_gpu_per_pci_device_whatever_its_os_devices),
		cmocka_unit_test(probe__ignores_bmc_displays_and_nvswitches),
		cmocka_unit_test(probe__does_not_count_sr_iov_virtual_functions_as_nics),
		cmocka_unit_test(probe__keeps_uuid_os_devices_and_nic_port_attributes),
		cmocka_unit_test(probe__reports_a_missing_file_in_a_diagnostic),
		cmocka_unit_test(probe__survives_truncated_and_corrupted_xml),
		cmocka_unit_test(probe__loads_the_live_machine_with_at_least_one_core),
		cmocka_unit_test(probe__exports_xml_that_loads_back_the_same),
		cmocka_unit_test(probe__reads_cpu_flags_only_where_the_xml_saved_them),
		cmocka_unit_test(probe__keeps_live_cpu_flags_through_export_and_cache),
		cmocka_unit_test(probe__reexport_never_adds_this_machines_flags),
		cmocka_unit_test(probe__live_load_ignores_a_stale_cache),
	};

	return cmocka_run_group_tests_name("test_probe", tests, NULL, NULL);
}
