/* backend_cuda_none.c - the CUDA backend of a trainer built without
 * nvcc: no device (backend_cuda.h).  In trainer/cuda's archive, so a
 * binary takes it only where the backend's own objects are not linked
 * ahead of the archives (trainer/build.mk).  Core. */
#include "trainer/cuda/backend_cuda.h" // defines: be_cuda_built, be_cuda_device_count

bool be_cuda_built(void)
{
	return false;
}

int be_cuda_device_count(void)
{
	return 0;
}

const char *be_cuda_describe(void)
{
	return "built without CUDA";
}
