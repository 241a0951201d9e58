/* stage_plan.c - the chain an entry flows along (see stage_plan.h).
 * Pure core: arrays in, arrays out. */
#include "launcher/stage/stage_plan.h" // defines: struct stage_link, stage_plan_link, stage_plan_chunks

void stage_plan_link(int in, int lacking, int nin, int before, int prev_in,
		     struct stage_link *link)
{
	*link = (struct stage_link){ .len = 0, .place = -1, .prev = -1, .next = -1 };
	if (!lacking)
		return;
	link->len = nin;
	if (!in)
		return;
	link->place = before;
	link->prev = before > 0 ? prev_in : -1;
	link->has_next = before < nin - 1;
}

uint64_t stage_plan_chunks(uint64_t bytes, size_t chunk)
{
	return bytes / chunk + (bytes % chunk != 0);
}
