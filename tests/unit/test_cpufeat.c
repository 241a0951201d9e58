/* test_cpufeat.c - CPU features from /proc/cpuinfo flags lines.
 *
 * The flags lines are those Linux printed on real machines of each CPU
 * generation; Ice Lake-SP and Sapphire Rapids are also those of the
 * *-cpuflags.xml fixtures (tests/fixtures/PROVENANCE), Zen 4 is the
 * machine these tests were written on.
 */
#include "topology/cpufeat.h" // defines: cpufeat_*
#include "common/sbuf.h"         // defines: struct sbuf

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* AMD EPYC 7742 (Zen 2): AVX2 and FMA, no AVX-512. */
static const char zen2[] =
	"fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr "
	"sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl "
	"nonstop_tsc cpuid extd_apicid aperfmperf pni pclmulqdq monitor ssse3 fma cx16 sse4_1 "
	"sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand lahf_lm cmp_legacy svm extapic "
	"cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw ibs skinit wdt tce topoext "
	"perfctr_core perfctr_nb bpext perfctr_llc mwaitx cpb cat_l3 cdp_l3 hw_pstate ssbd mba "
	"ibrs ibpb stibp vmmcall fsgsbase bmi1 avx2 smep bmi2 cqm rdt_a rdseed adx smap "
	"clflushopt clwb sha_ni xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc "
	"cqm_mbm_total cqm_mbm_local clzero irperf xsaveerptr wbnoinvd amd_ppin arat npt lbrv "
	"svm_lock nrip_save tsc_scale vmcb_clean flushbyasid decodeassists pausefilter "
	"pfthreshold avic v_vmsave_vmload vgif v_spec_ctrl umip rdpid overflow_recov succor smca "
	"sme sev sev_es";

/* Ice Lake-SP: AVX-512 with VNNI, no BF16. */
static const char icelake[] =
	"fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi "
	"mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon "
	"pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf pni pclmulqdq dtes64 monitor "
	"ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic movbe "
	"popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch cpuid_fault "
	"epb cat_l3 invpcid_single ssbd mba ibrs ibpb stibp ibrs_enhanced tpr_shadow vnmi "
	"flexpriority ept vpid ept_ad fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid cqm "
	"rdt_a avx512f avx512dq rdseed adx smap avx512ifma clflushopt clwb intel_pt avx512cd "
	"sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc "
	"cqm_mbm_total cqm_mbm_local wbnoinvd dtherm ida arat pln pts avx512vbmi umip pku ospke "
	"avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg tme avx512_vpopcntdq rdpid "
	"md_clear pconfig flush_l1d arch_capabilities";

/* Sapphire Rapids: everything, AMX included. */
static const char sapphire[] =
	"fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi "
	"mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon "
	"pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf tsc_known_freq pni "
	"pclmulqdq dtes64 ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 "
	"sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm "
	"3dnowprefetch cpuid_fault epb cat_l3 cat_l2 cdp_l3 invpcid_single intel_ppin cdp_l2 ssbd "
	"mba ibrs ibpb stibp ibrs_enhanced tpr_shadow vnmi flexpriority ept vpid ept_ad fsgsbase "
	"tsc_adjust bmi1 hle avx2 smep bmi2 erms invpcid rtm cqm rdt_a avx512f avx512dq rdseed adx "
	"smap avx512ifma clflushopt clwb intel_pt avx512cd sha_ni avx512bw avx512vl xsaveopt "
	"xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc cqm_mbm_total cqm_mbm_local "
	"split_lock_detect avx_vnni avx512_bf16 wbnoinvd dtherm ida arat pln pts avx512vbmi umip "
	"pku ospke waitpkg avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg tme "
	"avx512_vpopcntdq rdpid bus_lock_detect cldemote movdiri movdir64b enqcmd fsrm uintr "
	"md_clear serialize tsxldtrk pconfig arch_lbr amx_bf16 avx512_fp16 amx_tile amx_int8 "
	"flush_l1d arch_capabilities";

/* AMD EPYC Zen 4 (a VM): AVX-512 with BF16, no AMX, no FP16. */
static const char zen4[] =
	"fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr "
	"sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl "
	"xtopology nonstop_tsc cpuid extd_apicid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid "
	"sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor "
	"lahf_lm cmp_legacy cr8_legacy abm sse4a misalignsse 3dnowprefetch osvw topoext vmmcall "
	"fsgsbase tsc_adjust bmi1 avx2 smep bmi2 erms invpcid avx512f avx512dq rdseed adx smap "
	"avx512ifma clflushopt clwb avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 "
	"xsaves avx512_bf16 clzero xsaveerptr arat avx512vbmi umip avx512_vbmi2 gfni vaes "
	"vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq rdpid fsrm";

static void cpufeat__parses_each_cpu_generation(void **state)
{
	(void)state;
	assert_int_equal(cpufeat_parse(zen2), CPUFEAT_AVX2 | CPUFEAT_FMA);
	assert_int_equal(cpufeat_parse(icelake), CPUFEAT_AVX2 | CPUFEAT_FMA | CPUFEAT_AVX512F);
	assert_int_equal(cpufeat_parse(zen4),
			 CPUFEAT_AVX2 | CPUFEAT_FMA | CPUFEAT_AVX512F | CPUFEAT_AVX512_BF16);
	assert_int_equal(cpufeat_parse(sapphire), CPUFEAT_ALL & ~CPUFEAT_AMX_FP16);
	assert_int_equal(cpufeat_parse("amx_tile amx_fp16"), CPUFEAT_AMX_TILE | CPUFEAT_AMX_FP16);
}

/* The bf16 speed class: AMX, AMD's 2x dot product, Intel's same-rate one
 * (AMX hidden, or Cooper Lake), or emulation. */
static void cpufeat__tells_the_bf16_speed_class(void **state)
{
	/* CPU model 207 under a hypervisor that hides AMX */
	const char *spr_no_amx = "fpu sse4_2 avx avx2 fma avx512f avx512bw avx512_bf16 avx512_fp16";

	(void)state;
	assert_int_equal(cpufeat_bf16_speed(sapphire), CPUFEAT_BF16_AMX);
	assert_int_equal(cpufeat_bf16_speed(zen4), CPUFEAT_BF16_DOT_2X);
	assert_int_equal(cpufeat_bf16_speed(spr_no_amx), CPUFEAT_BF16_SAME_RATE);
	assert_int_equal(cpufeat_bf16_speed(icelake), CPUFEAT_BF16_EMULATED);
	assert_int_equal(cpufeat_bf16_speed(zen2), CPUFEAT_BF16_EMULATED);
	assert_int_equal(cpufeat_bf16_speed(NULL), CPUFEAT_BF16_EMULATED);
	/* amx_tile without amx_bf16 (an AMX-INT8-only part) is no AMX for bf16 */
	assert_int_equal(cpufeat_bf16_speed("avx512f avx512_bf16 amx_tile amx_int8"),
			 CPUFEAT_BF16_SAME_RATE);
	assert_true(cpufeat_bf16_can_win(CPUFEAT_BF16_AMX));
	assert_true(cpufeat_bf16_can_win(CPUFEAT_BF16_DOT_2X));
	assert_false(cpufeat_bf16_can_win(CPUFEAT_BF16_SAME_RATE));
	assert_false(cpufeat_bf16_can_win(CPUFEAT_BF16_EMULATED));
	assert_string_equal(cpufeat_bf16_speed_key(CPUFEAT_BF16_SAME_RATE), "same_rate");
	assert_string_equal(cpufeat_bf16_speed_text(CPUFEAT_BF16_SAME_RATE),
			    "native dot product at the fp32 FMA rate (Intel AVX512-BF16 without AMX)");
}

static void cpufeat__matches_whole_words_only(void **state)
{
	(void)state;
	assert_int_equal(cpufeat_parse("avx512fp16 avx512f_x xavx2 amx_bf16x avx2_ fma4 fma3"), 0);
	assert_int_equal(cpufeat_parse("avx512_vnni avx512vl avx_vnni amx_int8"), 0);
	assert_int_equal(cpufeat_parse(" \tavx2\n\tamx_tile  "), CPUFEAT_AVX2 | CPUFEAT_AMX_TILE);
	assert_int_equal(cpufeat_parse("amx_bf16"), CPUFEAT_AMX_BF16);
	assert_int_equal(cpufeat_parse("AVX2"), 0); /* the kernel's names are lowercase */
	assert_int_equal(cpufeat_parse(""), 0);
	assert_int_equal(cpufeat_parse(NULL), 0);
}

static void common(const char *cpuinfo, const char *want)
{
	char *got = cpufeat_common_flags(cpuinfo);

	if (!want) {
		assert_null(got);
		return;
	}
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void cpufeat__keeps_the_flags_every_processor_shares(void **state)
{
	(void)state;
	/* the usual case, with the lines /proc/cpuinfo has around flags */
	common("processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu  avx2\tfma\n"
	       "bugs\t\t: sysret_ss_attrs\n\nprocessor\t: 1\nflags\t\t: fpu  avx2\tfma\n",
	       "fpu avx2 fma");
	/* a processor without one: gone, the first processor's order kept */
	common("flags\t\t: fpu avx2 avx512f fma\nflags\t\t: fma fpu avx2\n"
	       "flags\t\t: avx2 fma fpu avx512f", "fpu avx2 fma");
	/* "vmx flags" and "bugs" are other lines, "flagsx" another key */
	common("flags\t\t: fpu avx2\nvmx flags\t: ept\nflagsx: avx2\n", "fpu avx2");
	/* a flags line with no flags */
	common("flags\t\t:\n", "");
	common("flags\t\t: avx2\nflags\t\t: fma\n", "");
	/* aarch64 says Features, and a text may be empty */
	common("processor\t: 0\nFeatures\t: fp asimd evtstrm aes\n", NULL);
	common("", NULL);
	common("flags without a colon avx2\n", NULL);
}

static void cpufeat__names_what_each_precision_needs(void **state)
{
	(void)state;
	assert_int_equal(cpufeat_native_for("bf16"), CPUFEAT_AVX512_BF16 | CPUFEAT_AMX_BF16);
	assert_int_equal(cpufeat_native_for("fp16"), CPUFEAT_AVX512_FP16);
	assert_int_equal(cpufeat_native_for("fp32"), 0);
	assert_int_equal(cpufeat_native_for("int8"), 0);
	assert_int_equal(cpufeat_native_for(NULL), 0);
	/* Zen 4 and Sapphire Rapids have bf16, Ice Lake does not; only
	 * Sapphire Rapids has fp16 */
	assert_true(cpufeat_parse(zen4) & cpufeat_native_for("bf16"));
	assert_false(cpufeat_parse(icelake) & cpufeat_native_for("bf16"));
	assert_false(cpufeat_parse(zen4) & cpufeat_native_for("fp16"));
	assert_true(cpufeat_parse(sapphire) & cpufeat_native_for("fp16"));
	/* AMX-BF16 alone is enough for bf16 */
	assert_true(cpufeat_parse("amx_tile amx_bf16") & cpufeat_native_for("bf16"));
}

static void cpufeat__formats_vendor_names_in_bit_order(void **state)
{
	struct sbuf sb = SBUF_INIT;

	(void)state;
	cpufeat_format(CPUFEAT_ALL, " ", &sb);
	assert_string_equal(sb.buf,
			    "AVX2 FMA AVX-512F AVX512-BF16 AVX512-FP16 AMX-TILE AMX-BF16 AMX-FP16");
	sbuf_reset(&sb);
	cpufeat_format(CPUFEAT_AMX_BF16 | CPUFEAT_AVX512_BF16, " or ", &sb);
	assert_string_equal(sb.buf, "AVX512-BF16 or AMX-BF16");
	sbuf_reset(&sb);
	cpufeat_format(0, ", ", &sb);
	assert_string_equal(sb.buf, "");
	for (size_t i = 0; i < CPUFEAT_COUNT; i++) {
		assert_int_equal(cpufeat_descs[i].bit, 1u << i);
		assert_int_equal(cpufeat_parse(cpufeat_descs[i].flag), cpufeat_descs[i].bit);
	}
	sbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cpufeat__parses_each_cpu_generation),
		cmocka_unit_test(cpufeat__matches_whole_words_only),
		cmocka_unit_test(cpufeat__tells_the_bf16_speed_class),
		cmocka_unit_test(cpufeat__keeps_the_flags_every_processor_shares),
		cmocka_unit_test(cpufeat__names_what_each_precision_needs),
		cmocka_unit_test(cpufeat__formats_vendor_names_in_bit_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
