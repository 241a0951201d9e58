/* cuda_pointwise.cu - the CUDA backend's element-wise work: bias and
 * ReLU, residual add, flatten, dropout, loss-scale checks, the losses,
 * the optimizers and the bias gradient, as grid-stride kernels written
 * expression for expression as the C kernels (built with --fmad=false).
 * Shell. */
#include "trainer/cuda/cuda_internal.cuh" // defines: G, *_TRY, blocks_for, cuda_*

/* The bias gradient db[c] = sum over rows of dy[row, c] in two passes of
 * a fixed order (the same bits every run).  Pass 1: a block of 32
 * columns x 8 lanes sums one chunk of rows, each warp reading 32
 * neighbouring columns of a row (coalesced), into part[chunk, c].  Pass
 * 2: one block per column adds its chunks in a tree.  hepcnn's first
 * layer at batch 256 (1M rows x 16) runs as 1024 blocks, not 16. */
enum { BG_COLS = 32, BG_LANES = 8, BG_MAX_CHUNKS = 1024, BG_MIN_ROWS = 64 };

__global__ void k_bias_grad_part(int rows, int k, int per, const float *dy, float *part)
{
	__shared__ float lane[BG_LANES][BG_COLS + 1];
	int c = blockIdx.x * BG_COLS + threadIdx.x;
	int lo = blockIdx.y * per, hi = min(rows, lo + per);
	float v = 0;

	if (c < k)
		for (int r = lo + threadIdx.y; r < hi; r += BG_LANES)
			v += dy[(size_t)r * k + c];
	lane[threadIdx.y][threadIdx.x] = v;
	__syncthreads();
	if (threadIdx.y == 0 && c < k) {
		for (int j = 1; j < BG_LANES; j++)
			v += lane[j][threadIdx.x];
		part[(size_t)blockIdx.y * k + c] = v;
	}
}

__global__ void k_bias_grad_sum(int chunks, int k, const float *part, float *db)
{
	__shared__ float t[256];
	float v = 0;

	for (int j = threadIdx.x; j < chunks; j += blockDim.x)
		v += part[(size_t)j * k + blockIdx.x];
	t[threadIdx.x] = v;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w /= 2) {
		if (threadIdx.x < w)
			t[threadIdx.x] += t[threadIdx.x + w];
		__syncthreads();
	}
	if (!threadIdx.x)
		db[blockIdx.x] = t[0];
}

__global__ void k_relu_fwd(size_t n, const float *x, float *y)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		y[i] = x[i] > 0 ? x[i] : 0;
}

__global__ void k_relu_bwd(size_t n, const float *y, const float *dy, float *dx)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		dx[i] = y[i] > 0 ? dy[i] : 0;
}

__global__ void k_unscale(size_t n, float *g, float scale, int *flag)
{
	int bad = 0;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		g[i] *= scale;
		bad |= !isfinite(g[i]);
	}
	if (bad)
		*flag = 1;
}

__global__ void k_add(size_t n, const float *a, const float *b, float *y)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		y[i] = a[i] + b[i];
}

/* Thread i owns NHWC element i and its (c,h,w) twin j. */
__global__ void k_flatten(int n, int hw, int c, const float *x, float *y, bool back)
{
	size_t per = (size_t)hw * c, total = per * n;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
	     i += (size_t)gridDim.x * blockDim.x) {
		size_t s = i / per, rem = i % per, p = rem / c, ch = rem % c;
		size_t j = s * per + ch * hw + p;

		if (back)
			y[i] = x[j];
		else
			y[j] = x[i];
	}
}

/* rng.h's rng_mix, rng_hash and rng_hash_uniform, bit for bit
 * (test_cuda.c compares the masks with the CPU's). */
__device__ uint64_t d_rng_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

__device__ float d_rng_hash_uniform(uint64_t key, uint64_t counter)
{
	uint64_t h = d_rng_mix(d_rng_mix(key ^ 0x3c6ef372fe94f82bull) + counter);

	return (float)(h >> 40) * 0x1.0p-24f;
}

__global__ void k_dropout(size_t n, const float *x, float *y, double p, uint64_t key, float scale)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		y[i] = d_rng_hash_uniform(key, i) >= p ? x[i] * scale : 0;
}

/* softmax_xent_f32 of kernels/pointwise.inc, one thread per sample:
 * term[i] and hit[i] for the fixed-order sum of k_sum_terms. */
__global__ void k_xent(int n, int k, const float *logits, const int32_t *labels, float *dlogits,
		       double *term, double *hit)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		const float *z = logits + (size_t)i * k;
		double mx = z[0], sum = 0;
		int best = 0, y = labels[i];

		for (int j = 1; j < k; j++)
			if (z[j] > mx) {
				mx = z[j];
				best = j;
			}
		for (int j = 0; j < k; j++)
			sum += exp(z[j] - mx);
		term[i] = log(sum) + mx - z[y];
		hit[i] = best == y;
		for (int j = 0; j < k; j++)
			dlogits[(size_t)i * k + j] = (float)((exp(z[j] - mx) / sum - (j == y)) / n);
	}
}

/* sigmoid_bce_f32, one thread per output. */
__global__ void k_bce(size_t nk, const float *logits, const float *targets, float *dlogits,
		      double *term, double *hit)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < nk;
	     i += (size_t)gridDim.x * blockDim.x) {
		double z = logits[i], t = targets[i];

		term[i] = (z > 0 ? z : 0) - z * t + log1p(exp(-fabs(z)));
		hit[i] = (z > 0) == (t > 0.5);
		dlogits[i] = (float)((1.0 / (1.0 + exp(-z)) - t) / (double)nk);
	}
}

/* out = (sum of term / div, sum of hit), summed in index order as the
 * C kernels sum: one thread, m is a batch's worth. */
__global__ void k_sum_terms(size_t m, const double *term, const double *hit, double div,
			    double *out)
{
	double loss = 0, right = 0;

	for (size_t i = 0; i < m; i++) {
		loss += term[i];
		right += hit[i];
	}
	out[0] = loss / div;
	out[1] = right;
}

/* amp_scale's g *= k; poison: then g[0] = NaN. */
__global__ void k_scale(size_t n, float *g, float k, bool poison)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		g[i] = poison && !i ? NAN : g[i] * k;
}

/* optim.c's loops, line for line. */
__global__ void k_sgd(size_t n, float *p, const float *g, float *m, struct be_cuda_optim o)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float d = g[i];

		if (o.wd != 0.0f)
			d += o.wd * p[i];
		if (o.mu != 0.0f) {
			m[i] = o.mu * m[i] + d;
			d = o.nesterov ? d + o.mu * m[i] : m[i];
		}
		p[i] -= o.lr * d;
	}
}

__global__ void k_adamw(size_t n, float *p, const float *g, float *m, float *v,
			struct be_cuda_optim o)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float gi = g[i];

		p[i] *= o.decay;
		m[i] = o.b1 * m[i] + (1.0f - o.b1) * gi;
		v[i] = o.b2 * v[i] + (1.0f - o.b2) * gi * gi;
		p[i] -= o.lr / o.bc1 * (m[i] / (sqrtf(v[i]) / o.bc2s + o.eps));
	}
}

/* Rows per chunk of the bias gradient's first pass. */
static int bg_rows_per_chunk(int rows)
{
	int per = (rows + BG_MAX_CHUNKS - 1) / BG_MAX_CHUNKS;

	return per < BG_MIN_ROWS ? BG_MIN_ROWS : per;
}

size_t cuda_bg_part_floats(int rows, int k)
{
	int per = bg_rows_per_chunk(rows);

	return (size_t)((rows + per - 1) / per) * k;
}

/* Grow-only, as scratch_reserve. */
int cuda_part_reserve(size_t floats, struct sbuf *err)
{
	if (floats <= G.part_floats)
		return 0;
	CU_TRY(cudaStreamSynchronize(G.compute));
	cudaFree(G.part);
	G.part = NULL;
	G.part_floats = 0;
	CU_TRY(cudaMalloc((void **)&G.part, floats * sizeof(float)));
	G.part_floats = floats;
	return 0;
fail:
	return -1;
}

int cuda_bias_grad(int rows, int k, const float *d_dy, float *d_db, struct sbuf *err)
{
	int per = bg_rows_per_chunk(rows), chunks = (rows + per - 1) / per;
	dim3 grid((k + BG_COLS - 1) / BG_COLS, chunks), block(BG_COLS, BG_LANES);

	if (cuda_part_reserve((size_t)chunks * k, err))
		return -1;
	k_bias_grad_part<<<grid, block, 0, G.compute>>>(rows, k, per, d_dy, G.part);
	k_bias_grad_sum<<<k, 256, 0, G.compute>>>(chunks, k, G.part, d_db);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

/* ---- element-wise ---- */

extern "C" int be_cuda_relu_forward(size_t n, const float *d_x, float *d_y, struct sbuf *err)
{
	k_relu_fwd<<<blocks_for(n), 256, 0, G.compute>>>(n, d_x, d_y);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_relu_backward(size_t n, const float *d_y, const float *d_dy, float *d_dx,
				     struct sbuf *err)
{
	k_relu_bwd<<<blocks_for(n), 256, 0, G.compute>>>(n, d_y, d_dy, d_dx);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_unscale(size_t n, float *d_g, float scale, bool *overflow, struct sbuf *err)
{
	int h = 0;

	CU_TRY(cudaMemsetAsync(G.flag, 0, sizeof(int), G.compute));
	k_unscale<<<blocks_for(n), 256, 0, G.compute>>>(n, d_g, scale, G.flag);
	CU_TRY(cudaGetLastError());
	CU_TRY(cudaMemcpyAsync(&h, G.flag, sizeof(int), cudaMemcpyDeviceToHost, G.compute));
	CU_TRY(cudaStreamSynchronize(G.compute));
	*overflow = h != 0;
	return 0;
fail:
	return -1;
}

/* The per-sample (per-output) terms live in the scratch: nothing else
 * uses it between kernels of one call. */
static int loss_terms(size_t m, double **term, double **hit, struct sbuf *err)
{
	if (cuda_scratch_reserve(2 * m * sizeof(double), err))
		return -1;
	*term = (double *)G.scratch;
	*hit = *term + m;
	return 0;
}

extern "C" int be_cuda_softmax_xent(int n, int k, const float *d_logits, const int32_t *d_labels,
				    float *d_dlogits, double *d_out, struct sbuf *err)
{
	double *term, *hit;

	if (loss_terms((size_t)n, &term, &hit, err))
		return -1;
	k_xent<<<(n + 127) / 128, 128, 0, G.compute>>>(n, k, d_logits, d_labels, d_dlogits, term, hit);
	k_sum_terms<<<1, 1, 0, G.compute>>>((size_t)n, term, hit, (double)n, d_out);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_sigmoid_bce(int n, int k, const float *d_logits, const float *d_targets,
				   float *d_dlogits, double *d_out, struct sbuf *err)
{
	size_t nk = (size_t)n * k;
	double *term, *hit;

	if (loss_terms(nk, &term, &hit, err))
		return -1;
	k_bce<<<blocks_for(nk), 256, 0, G.compute>>>(nk, d_logits, d_targets, d_dlogits, term, hit);
	k_sum_terms<<<1, 1, 0, G.compute>>>(nk, term, hit, (double)nk, d_out);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_scale(size_t n, float *d_g, float k, bool poison, struct sbuf *err)
{
	if (k == 1.0f && !poison)
		return 0;
	k_scale<<<blocks_for(n), 256, 0, G.compute>>>(n, d_g, k, poison);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_copy(float *d_dst, const float *d_src, size_t n, struct sbuf *err)
{
	CU_TRY(cudaMemcpyAsync(d_dst, d_src, n * sizeof(float), cudaMemcpyDeviceToDevice, G.compute));
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_add(size_t n, const float *d_a, const float *d_b, float *d_y,
			   struct sbuf *err)
{
	k_add<<<blocks_for(n), 256, 0, G.compute>>>(n, d_a, d_b, d_y);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_bias_act(size_t rows, int k, const float *d_b, bool relu, float *d_y,
				struct sbuf *err)
{
	size_t n = rows * k;

	k_bias_act<<<blocks_for(n), 256, 0, G.compute>>>(n, k, (const float *)d_y, d_b, relu, d_y);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_bias_grad(int rows, int k, const float *d_dy, float *d_db,
				 struct sbuf *err)
{
	return cuda_bias_grad(rows, k, d_dy, d_db, err);
}

extern "C" int be_cuda_flatten(int n, int h, int w, int c, const float *d_x, float *d_y,
			       bool back, struct sbuf *err)
{
	size_t total = (size_t)n * h * w * c;

	k_flatten<<<blocks_for(total), 256, 0, G.compute>>>(n, h * w, c, d_x, d_y, back);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_dropout(size_t n, const float *d_x, float *d_y, double p, uint64_t key,
			       struct sbuf *err)
{
	/* the scale of dropout_fwd_f32: 1/(1-p) in double, rounded once */
	k_dropout<<<blocks_for(n), 256, 0, G.compute>>>(n, d_x, d_y, p, key, (float)(1.0 / (1.0 - p)));
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_optim_update(size_t n, float *d_p, const float *d_g, float *d_m, float *d_v,
				    const struct be_cuda_optim *o, struct sbuf *err)
{
	if (o->adamw)
		k_adamw<<<blocks_for(n), 256, 0, G.compute>>>(n, d_p, d_g, d_m, d_v, *o);
	else
		k_sgd<<<blocks_for(n), 256, 0, G.compute>>>(n, d_p, d_g, d_m, *o);
	CU_TRY(cudaGetLastError());
	return 0;
fail:
	return -1;
}
