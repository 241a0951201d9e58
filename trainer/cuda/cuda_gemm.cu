/* cuda_gemm.cu - the CUDA backend's GEMMs through cuBLASLt, told the
 * alignment their operands really have (gpu_alignment).  Shell. */
#include "trainer/cuda/cuda_internal.cuh" // defines: G, *_TRY, blocks_for, cuda_*

/* ---- GEMM ---- */

/* The heuristic assumes 256-byte-aligned operands unless told otherwise
 * (and may then pick a kernel that faults on a view into an arena):
 * tell it what the pointers have. */
static int set_alignment(cublasLtMatmulPreference_t pref, const void *a, const void *b,
			 const void *c, struct sbuf *err)
{
	uint32_t al[3] = { gpu_alignment((uintptr_t)a), gpu_alignment((uintptr_t)b),
			   gpu_alignment((uintptr_t)c) };

	LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
						    &al[0], sizeof(al[0])));
	LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
						    &al[1], sizeof(al[1])));
	LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
						    &al[2], sizeof(al[2])));
	LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
						    &al[2], sizeof(al[2])));
	return 0;
fail:
	return -1;
}

extern "C" int be_cuda_gemm(char ta, char tb, int m, int n, int k, float alpha, const float *d_a,
			    int lda, const float *d_b, int ldb, float beta, float *d_c, int ldc,
			    enum be_precision prec, struct sbuf *err)
{
	/* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T:
	 * swap the operands, keep the transposes. */
	cublasLtMatmulDesc_t op = NULL;
	cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t h;
	cublasOperation_t opa = tb == 't' ? CUBLAS_OP_T : CUBLAS_OP_N;
	cublasOperation_t opb = ta == 't' ? CUBLAS_OP_T : CUBLAS_OP_N;
	cudaDataType_t in = prec == BE_BF16 ? CUDA_R_16BF : prec == BE_FP16 ? CUDA_R_16F : CUDA_R_32F;
	/* Elements to convert: rows x ld of each row-major operand, B being
	 * (tb ? n x k : k x n) and A (ta ? k x m : m x k). */
	size_t na = (size_t)(tb == 't' ? n : k) * ldb, nb = (size_t)(ta == 't' ? k : m) * lda;
	const void *a = d_b, *b = d_a;
	int found = 0, rc = -1;

	if (prec != BE_FP32) {
		size_t e = cuda_elem_bytes(prec);

		if (cuda_scratch_reserve((na + nb) * e + 256, err))
			return -1;
		if (cuda_convert(na, d_b, G.scratch, prec) ||
		    cuda_convert(nb, d_a, (char *)G.scratch + ((na * e + 255) / 256) * 256, prec)) {
			sbuf_addstr(err, "CUDA: conversion kernel failed to launch");
			return -1;
		}
		a = G.scratch;
		b = (char *)G.scratch + ((na * e + 255) / 256) * 256;
	}
	LT_TRY(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	LT_TRY(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof(opa)));
	LT_TRY(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof(opb)));
	LT_TRY(cublasLtMatrixLayoutCreate(&la, in, opa == CUBLAS_OP_N ? n : k,
					  opa == CUBLAS_OP_N ? k : n, ldb));
	LT_TRY(cublasLtMatrixLayoutCreate(&lb, in, opb == CUBLAS_OP_N ? k : m,
					  opb == CUBLAS_OP_N ? m : k, lda));
	LT_TRY(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, n, m, ldc));
	LT_TRY(cublasLtMatmulPreferenceCreate(&pref));
	LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
						    &G.lt_ws_bytes, sizeof(G.lt_ws_bytes)));
	if (set_alignment(pref, a, b, d_c, err))
		goto fail;
	LT_TRY(cublasLtMatmulAlgoGetHeuristic(G.lt, op, la, lb, lc, lc, pref, 1, &h, &found));
	if (!found || h.state != CUBLAS_STATUS_SUCCESS) {
		sbuf_addf(err, "cuBLASLt: no algorithm for a %s GEMM %dx%dx%d (status %d)",
			  be_precision_name(prec), m, n, k, found ? (int)h.state : -1);
		goto fail;
	}
	LT_TRY(cublasLtMatmul(G.lt, op, &alpha, a, la, b, lb, &beta, d_c, lc, d_c, lc, &h.algo,
			      G.lt_ws, G.lt_ws_bytes, G.compute));
	rc = 0;
fail:
	/* Descriptors are host objects; creating them per call costs
	 * microseconds, against a GEMM of tens.  A cache per shape is the
	 * next step if profiles show it. */
	if (pref)
		cublasLtMatmulPreferenceDestroy(pref);
	if (lc)
		cublasLtMatrixLayoutDestroy(lc);
	if (lb)
		cublasLtMatrixLayoutDestroy(lb);
	if (la)
		cublasLtMatrixLayoutDestroy(la);
	if (op)
		cublasLtMatmulDescDestroy(op);
	return rc;
}
