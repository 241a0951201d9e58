/* comm_pack.h - 16-bit gradient compression for the allreduce: fp32 to
 * fp16 or bf16 and back, and the fp32-accumulating sum of two packed
 * vectors that comm.c registers as a user-defined MPI_Op.
 *
 * Core: no MPI, no allocation.  Rounding is to nearest, ties to even,
 * for both formats; NaN stays NaN, overflow goes to infinity (fp16 tops
 * out at 65504: gradients are packed after the 1/world averaging
 * factor, which keeps sums within range).
 *
 * Error (stated, and measured by tests/unit/test_comm.c and make bench):
 * packing one value costs a relative error of at most u = 2^-11 (fp16)
 * or 2^-8 (bf16); a ring or tree sum over `world` ranks rounds each
 * partial sum once more, so an averaged gradient element is within
 * (world) * u * sum_r |g_r| / world of the fp32 average (for fp16 above
 * its normal range 2^-14; below it the absolute error is 2^-25).
 */
#ifndef HPT_COMM_PACK_H
#define HPT_COMM_PACK_H

#include <stddef.h>
#include <stdint.h>

enum comm_pack_kind { COMM_PACK_FP16, COMM_PACK_BF16 };

/* dst[i] = 16-bit(src[i]). */
void comm_pack(enum comm_pack_kind k, const float *src, uint16_t *dst, size_t n);
/* dst[i] = float(src[i]). */
void comm_unpack(enum comm_pack_kind k, const uint16_t *src, float *dst, size_t n);
/* inout[i] = 16-bit(float(in[i]) + float(inout[i])): the reduction. */
void comm_pack_sum(enum comm_pack_kind k, const uint16_t *in, uint16_t *inout, size_t n);

/* Unit roundoff of one packing: 2^-11 or 2^-8. */
double comm_pack_unit(enum comm_pack_kind k);

#endif
