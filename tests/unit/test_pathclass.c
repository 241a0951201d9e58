/* test_pathclass.c - how far apart two PCI devices are (PIX..SYS), on real
 * machines' fixtures. */
#include "tests/unit/topolib.h"
#include "topology/pathclass.h" // defines: pathclass_between, pathclass_name

static void pathclass__separates_host_bridges_within_and_across_numa_nodes(void **state)
{
	struct node_topo t;

	(void)state;
	load("224em64t-2n56c2t-dgxh100.xml", &t);
	assert_int_equal(pathclass_between(&t, &t.gpus[0].pci, &t.nics[0].pci), PATHCLASS_PIX);
	assert_int_equal(pathclass_between(&t, &t.gpus[0].pci, &t.gpus[1].pci), PATHCLASS_NODE);
	assert_int_equal(pathclass_between(&t, &t.gpus[0].pci, &t.gpus[4].pci), PATHCLASS_SYS);
	assert_int_equal(pathclass_between(&t, &t.gpus[0].pci, &t.gpus[0].pci), PATHCLASS_PIX);
	topo_release(&t);
	load("256amd64-8n16c2t-dgxa100.xml", &t);
	assert_int_equal(pathclass_between(&t, &t.gpus[0].pci, &t.gpus[1].pci), PATHCLASS_PIX);
	assert_int_equal(pathclass_between(&t, &t.gpus[0].pci, &t.nics[0].pci), PATHCLASS_PXB);
	/* two GPUs of one socket, different NPS4 quadrants */
	assert_int_equal(pathclass_between(&t, &t.gpus[0].pci, &t.gpus[2].pci), PATHCLASS_SYS);
	topo_release(&t);
	load("32em64t-2n8c2t-pci-wholeio.xml", &t);
	/* 83:00.0 and 84:00.0 sit on two root ports of one host bridge */
	assert_int_equal(pathclass_between(&t, &t.gpus[1].pci, &t.gpus[2].pci), PATHCLASS_PHB);
	topo_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pathclass__separates_host_bridges_within_and_across_numa_nodes),
	};

	return cmocka_run_group_tests_name("test_pathclass", tests, NULL, NULL);
}
