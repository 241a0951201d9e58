/* test_show.c - what `hpctrain topo` prints: summary, matrix, gres.conf,
 * CPU features and JSON. */
#include "tests/unit/topolib.h"
#include "topology/show.h"    // defines: show_*
#include "topology/cpufeat.h" // defines: cpufeat_parse

#include <jansson.h>

#include <string.h>

static void show__renders_summary_matrix_and_gres_conf(void **state)
{
	struct node_topo t;
	struct sbuf sb = SBUF_INIT;

	(void)state;
	load("256amd64-8n16c2t-dgxa100.xml", &t);
	show_summary(&t, &sb);
	assert_non_null(strstr(sb.buf, "numa 3: 128.0 GiB; cores 48-63; cpus 48-63,176-191\n"));
	assert_non_null(strstr(sb.buf, "\ncpu features: unknown (no CPU flags recorded; "
				       "hpctrain topo --export-xml on the node saves them)\n"));
	assert_non_null(strstr(sb.buf, "  gpu 0  0000:05:00.0  GA100 [A100 SXM4 40GB]  numa 3  (card1, renderD128)\n"));
	assert_non_null(strstr(sb.buf, "  nic 0  0000:09:00.0  mlx5_0 ibp9s0  MT28908 Family [ConnectX-6]  numa 3\n"));
	sbuf_reset(&sb);
	show_matrix(&t, &sb);
	assert_non_null(strstr(sb.buf, "GPU0\t X \tPIX\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tPXB\tPXB\tSYS"));
	assert_non_null(strstr(sb.buf, "\t48-63,176-191\t3\n"));
	assert_non_null(strstr(sb.buf, "  PIX  = Connection traversing at most a single PCIe bridge\n"));
	assert_non_null(strstr(sb.buf, "  NIC9: mlx5_9\n"));
	sbuf_reset(&sb);
	show_gres_conf(&t, &sb);
	assert_non_null(strstr(sb.buf, "\nName=gpu File=/dev/nvidia0 Cores=48-63\n"));
	assert_non_null(strstr(sb.buf, "\nName=gpu File=/dev/nvidia7 Cores=80-95\n"));
	sbuf_release(&sb);
	topo_release(&t);
}

static void show__lists_the_cpu_features_a_node_has_and_lacks(void **state)
{
	struct node_topo t;
	struct sbuf sb = SBUF_INIT;
	json_t *j, *f;

	(void)state;
	load("144em64t-4n18c2t-snc2-cpuonly-cpuflags.xml", &t);
	show_summary(&t, &sb);
	assert_non_null(strstr(sb.buf, "\ncpu features: AVX2 FMA AVX-512F "
				       "(no AVX512-BF16, AVX512-FP16, AMX-TILE, AMX-BF16, AMX-FP16)\n"
				       "bf16 speed: emulated ("));
	j = show_json_topo(&t);
	f = json_object_get(j, "cpu_features");
	assert_true(json_is_true(json_object_get(f, "avx512f")));
	assert_true(json_is_false(json_object_get(f, "avx512_bf16")));
	assert_true(json_is_false(json_object_get(f, "amx_bf16")));
	assert_int_equal(json_object_size(f), CPUFEAT_COUNT);
	assert_string_equal(json_string_value(json_object_get(j, "bf16_speed")), "emulated");
	json_decref(j);
	topo_release(&t);
	sbuf_reset(&sb);
	load("224em64t-2n56c2t-dgxh100-cpuflags.xml", &t);
	show_summary(&t, &sb);
	assert_non_null(strstr(sb.buf, "\ncpu features: AVX2 FMA AVX-512F AVX512-BF16 AVX512-FP16 "
				       "AMX-TILE AMX-BF16 (no AMX-FP16)\nbf16 speed: AMX ("));
	topo_release(&t);
	sbuf_reset(&sb);
	load("224em64t-2n56c2t-dgxh100.xml", &t);
	j = show_json_topo(&t);
	assert_true(json_is_null(json_object_get(j, "cpu_features")));
	json_decref(j);
	free(t.cpu_flags);
	t.cpu_flags = xstrdup("fpu sse2");
	show_summary(&t, &sb);
	assert_non_null(strstr(sb.buf, "\ncpu features: none (no AVX2, FMA, AVX-512F, AVX512-BF16, "
				       "AVX512-FP16, AMX-TILE, AMX-BF16, AMX-FP16)\n"));
	topo_release(&t);
	sbuf_release(&sb);
}

static void show__topology_json_parses_back_with_every_device(void **state)
{
	(void)state;
	for (size_t f = 0; f < N_FIXTURES; f++) {
		struct node_topo t;
		json_error_t jerr;
		json_t *j, *back;
		char *s;

		load(fixtures[f].file, &t);
		j = show_json_topo(&t);
		assert_non_null(j);
		s = json_dumps(j, JSON_SORT_KEYS);
		assert_non_null(s);
		back = json_loads(s, 0, &jerr);
		assert_non_null(back);
		assert_int_equal(json_array_size(json_object_get(back, "gpus")), fixtures[f].gpus);
		assert_int_equal(json_array_size(json_object_get(back, "nics")), fixtures[f].nics);
		assert_int_equal(json_array_size(json_object_get(back, "cores")), t.n_cores);
		free(s);
		json_decref(j);
		json_decref(back);
		topo_release(&t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(show__renders_summary_matrix_and_gres_conf),
		cmocka_unit_test(show__lists_the_cpu_features_a_node_has_and_lacks),
		cmocka_unit_test(show__topology_json_parses_back_with_every_device),
	};

	return cmocka_run_group_tests_name("test_show", tests, NULL, NULL);
}
