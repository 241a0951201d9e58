/* test_topo.c - struct node_topo itself: the fingerprint that tells
 * nodes of one kind. */
#include "tests/unit/topolib.h"

static void topo__fingerprint_ignores_names_but_not_placement(void **state)
{
	struct node_topo a, b;
	uint64_t fa;

	(void)state;
	load("256amd64-8n16c2t-dgxa100.xml", &a);
	load("256amd64-8n16c2t-dgxa100.xml", &b);
	fa = topo_fingerprint(&a);
	assert_true(fa == topo_fingerprint(&b));
	free(b.hostname);
	b.hostname = xstrdup("other-node");
	assert_true(fa == topo_fingerprint(&b));
	bitmap_clr(&b.allowed, 0);
	assert_true(fa != topo_fingerprint(&b));
	topo_release(&a);
	topo_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(topo__fingerprint_ignores_names_but_not_placement),
	};

	return cmocka_run_group_tests_name("test_topo", tests, NULL, NULL);
}
