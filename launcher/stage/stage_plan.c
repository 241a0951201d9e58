/* stage_plan.c - the chain an entry flows along (see stage_plan.h).
 * Pure core: arrays in, arrays out. */
#include "launcher/stage/stage_plan.h" // defines: stage_plan_chain, stage_plan_place, stage_plan_chunks

int stage_plan_chain(const unsigned char *lacks, int nranks, int *chain)
{
	int len = 0;

	for (int r = 0; r < nranks; r++)
		if (lacks[r])
			len++;
	if (!len)
		return 0;
	len = 0;
	chain[len++] = 0;
	for (int r = 1; r < nranks; r++)
		if (lacks[r])
			chain[len++] = r;
	return len;
}

int stage_plan_place(const int *chain, int len, int rank, int *prev, int *next)
{
	*prev = *next = -1;
	for (int i = 0; i < len; i++) {
		if (chain[i] != rank)
			continue;
		*prev = i ? chain[i - 1] : -1;
		*next = i + 1 < len ? chain[i + 1] : -1;
		return i;
	}
	return -1;
}

uint64_t stage_plan_chunks(uint64_t bytes, size_t chunk)
{
	return bytes / chunk + (bytes % chunk != 0);
}
