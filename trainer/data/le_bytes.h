/* le_bytes.h - little-endian integers and floats in byte buffers, for the
 * shard and checkpoint formats.  Core, header only.  Explicit byte order
 * so files move between machines; floats travel as their IEEE bits, so
 * a checkpoint restores values bit for bit. */
#ifndef HPT_LE_BYTES_H
#define HPT_LE_BYTES_H

#include "common/sbuf.h" // defines: struct sbuf, sbuf_add

#include <stdint.h>
#include <string.h>

static inline void le_put_u32(struct sbuf *sb, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	sbuf_add(sb, b, 4);
}

static inline void le_put_u64(struct sbuf *sb, uint64_t v)
{
	le_put_u32(sb, (uint32_t)v);
	le_put_u32(sb, (uint32_t)(v >> 32));
}

static inline void le_put_f64(struct sbuf *sb, double d)
{
	uint64_t v;

	memcpy(&v, &d, 8);
	le_put_u64(sb, v);
}

static inline void le_put_floats(struct sbuf *sb, const float *f, size_t n)
{
	sbuf_grow(sb, 4 * n);
	for (size_t i = 0; i < n; i++) {
		uint32_t v;

		memcpy(&v, &f[i], 4);
		le_put_u32(sb, v);
	}
}

static inline uint32_t le_get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le_get_u64(const uint8_t *p)
{
	return le_get_u32(p) | (uint64_t)le_get_u32(p + 4) << 32;
}

static inline double le_get_f64(const uint8_t *p)
{
	uint64_t v = le_get_u64(p);
	double d;

	memcpy(&d, &v, 8);
	return d;
}

static inline void le_get_floats(const uint8_t *p, float *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t v = le_get_u32(p + 4 * i);

		memcpy(&f[i], &v, 4);
	}
}

#endif
