// gpuops.dlserver cuda_toolkit verification: one kernel, compiled by each toolkit's nvcc on
// every host; run only where a GPU and a loaded driver are present. Prints "gpuops-cuda-ok <n>"
// when the kernel ran and wrote back the expected value.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void add_one(int *value) { *value += 1; }

int main() {
    int host = 41, *device = nullptr;
    if (cudaMalloc(&device, sizeof(int)) != cudaSuccess) { std::printf("gpuops-cuda-fail malloc\n"); return 1; }
    cudaMemcpy(device, &host, sizeof(int), cudaMemcpyHostToDevice);
    add_one<<<1, 1>>>(device);
    cudaError_t err = cudaMemcpy(&host, device, sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(device);
    if (err != cudaSuccess || host != 42) { std::printf("gpuops-cuda-fail %s\n", cudaGetErrorString(err)); return 1; }
    std::printf("gpuops-cuda-ok %d\n", host);
    return 0;
}
