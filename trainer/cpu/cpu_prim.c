/* cpu_prim.c - the CPU backend's oneDNN plumbing (cpu_internal.h):
 * primitives with user-managed scratchpads allocated at plan time, so
 * nothing in the step loop allocates; planned reorders between the
 * layers' plain layouts and a kernel's own; and plan_check, which
 * refuses oneDNN's reference implementations. */
#include "trainer/cpu/cpu_internal.h" // defines: struct prim, struct relayout
#include "common/strfmt.h" // defines: strfmt_label

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Refuses a reference implementation: oneDNN falls back to one where no
 * JIT kernel takes a layout or type combination, and it runs 100-1000
 * times slower (a bf16 convolution took 13 s per call instead of 4 ms). */
dnnl_status_t plan_check(const_dnnl_primitive_desc_t pd)
{
	const char *impl = NULL;

	if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success ||
	    !impl)
		return dnnl_success;
	if (strncmp(impl, "ref", 3) && !strstr(impl, ":ref"))
		return dnnl_success;
	strfmt_label(cpu_refused, sizeof(cpu_refused), "%s", impl);
	return dnnl_unimplemented;
}

/* The implementation name of a planned primitive. */
void impl_name(const_dnnl_primitive_desc_t pd, char *buf, size_t size)
{
	const char *impl = NULL;

	if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success ||
	    !impl)
		impl = "unknown";
	strfmt_label(buf, size, "%s", impl);
}

dnnl_status_t prim_create(struct prim *pr, const_dnnl_op_desc_t op,
			  const_dnnl_primitive_desc_t hint, const dnnl_post_ops_t po)
{
	dnnl_primitive_attr_t attr = NULL;
	const dnnl_memory_desc_t *smd;
	dnnl_status_t st;

	st = dnnl_primitive_attr_create(&attr);
	if (st == dnnl_success)
		st = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
	if (st == dnnl_success && po)
		st = dnnl_primitive_attr_set_post_ops(attr, po);
	if (st == dnnl_success)
		st = dnnl_primitive_desc_create(&pr->pd, op, attr, cpu_engine, hint);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	if (st == dnnl_success)
		st = plan_check(pr->pd);
	if (st != dnnl_success)
		return st;
	st = dnnl_primitive_create(&pr->p, pr->pd);
	if (st != dnnl_success)
		return st;
	smd = dnnl_primitive_desc_query_md(pr->pd, dnnl_query_scratchpad_md, 0);
	if (smd && dnnl_memory_desc_get_size(smd)) {
		pr->scratch_buf = aligned_alloc(64, (dnnl_memory_desc_get_size(smd) + 63) / 64 * 64);
		if (!pr->scratch_buf)
			return dnnl_out_of_memory;
		st = dnnl_memory_create(&pr->scratch, smd, cpu_engine, pr->scratch_buf);
	}
	return st;
}

void prim_release(struct prim *pr)
{
	if (pr->p)
		dnnl_primitive_destroy(pr->p);
	if (pr->pd)
		dnnl_primitive_desc_destroy(pr->pd);
	if (pr->scratch)
		dnnl_memory_destroy(pr->scratch);
	free(pr->scratch_buf);
	memset(pr, 0, sizeof(*pr));
}

/* Runs pr with args plus its scratchpad, then waits. */
dnnl_status_t prim_run(struct prim *pr, int nargs, dnnl_exec_arg_t *args)
{
	dnnl_exec_arg_t all[8];
	dnnl_status_t st;

	memcpy(all, args, nargs * sizeof(*args));
	if (pr->scratch)
		all[nargs++] = (dnnl_exec_arg_t){ DNNL_ARG_SCRATCHPAD, pr->scratch };
	st = dnnl_primitive_execute(pr->p, cpu_stream, nargs, all);
	return st == dnnl_success ? dnnl_stream_wait(cpu_stream) : st;
}

/* A memory object whose handle is set before each use. */
dnnl_status_t mem_create(dnnl_memory_t *m, const dnnl_memory_desc_t *md)
{
	return dnnl_memory_create(m, md, cpu_engine, DNNL_MEMORY_NONE);
}

dnnl_status_t mem_set(dnnl_memory_t m, const void *p)
{
	return dnnl_memory_set_data_handle(m, (void *)p);
}

dnnl_status_t relayout_create(struct relayout *rl, const dnnl_memory_desc_t *from,
			      const dnnl_memory_desc_t *to, int to_internal)
{
	const dnnl_memory_desc_t *internal = to_internal ? to : from;
	dnnl_status_t st;

	st = mem_create(&rl->plain, to_internal ? from : to);
	if (st != dnnl_success || dnnl_memory_desc_equal(from, to))
		return st;
	rl->buf = be_alloc(dnnl_memory_desc_get_size(internal) / sizeof(float) + 16);
	if (!rl->buf)
		return dnnl_out_of_memory;
	st = dnnl_memory_create(&rl->internal, internal, cpu_engine, rl->buf);
	if (st == dnnl_success)
		st = dnnl_reorder_primitive_desc_create(&rl->r.pd, from, cpu_engine, to, cpu_engine, NULL);
	if (st == dnnl_success)
		st = plan_check(rl->r.pd);
	if (st == dnnl_success)
		st = dnnl_primitive_create(&rl->r.p, rl->r.pd);
	return st;
}

void relayout_release(struct relayout *rl)
{
	prim_release(&rl->r);
	if (rl->plain)
		dnnl_memory_destroy(rl->plain);
	if (rl->internal)
		dnnl_memory_destroy(rl->internal);
	be_free(rl->buf);
	memset(rl, 0, sizeof(*rl));
}

/* Returns the memory a primitive should use for the plain buffer p:
 * p itself when the layouts agree, else the internal copy (converted
 * from p first when to_internal). */
dnnl_status_t relayout_in(struct relayout *rl, const float *p, dnnl_memory_t *out)
{
	dnnl_status_t st = mem_set(rl->plain, p);

	if (st != dnnl_success)
		return st;
	*out = rl->plain;
	if (!rl->r.p)
		return st;
	*out = rl->internal;
	dnnl_exec_arg_t a[2] = { { DNNL_ARG_FROM, rl->plain }, { DNNL_ARG_TO, rl->internal } };
	st = dnnl_primitive_execute(rl->r.p, cpu_stream, 2, a);
	return st == dnnl_success ? dnnl_stream_wait(cpu_stream) : st;
}

/* After a primitive wrote into the memory relayout_out_mem() gave, copy
 * it out to the plain buffer. */
dnnl_status_t relayout_out_mem(struct relayout *rl, float *p, dnnl_memory_t *out)
{
	dnnl_status_t st = mem_set(rl->plain, p);

	*out = rl->r.p ? rl->internal : rl->plain;
	return st;
}

dnnl_status_t relayout_out_finish(struct relayout *rl)
{
	dnnl_status_t st;

	if (!rl->r.p)
		return dnnl_success;
	dnnl_exec_arg_t a[2] = { { DNNL_ARG_FROM, rl->internal }, { DNNL_ARG_TO, rl->plain } };
	st = dnnl_primitive_execute(rl->r.p, cpu_stream, 2, a);
	return st == dnnl_success ? dnnl_stream_wait(cpu_stream) : st;
}
