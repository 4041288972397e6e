/*
 * The lab's all_reduce_perf: a real MPI program (no GPU in the lab) that runs MPI_Allreduce of
 * float sums between its ranks (over TCP between the lab containers) and prints what it measured
 * in nccl-tests' text format, so that the production parser, checks and pair test read it as they
 * read nccl-tests' all_reduce_perf built with MPI=1: one "#  Rank N Group 0 Pid P on HOST device D"
 * line per rank (the host each rank really ran on), then one row per size with the time, algorithm
 * and bus bandwidth (busbw = algbw * 2(n-1)/n, as nccl-tests defines it) out of place and in place,
 * and the count of wrong elements (each rank sends rank+1, so every element must be n(n+1)/2).
 *
 * Options (nccl-tests' names): -b/-e smallest/largest size in bytes (K/M/G suffixes), -f factor,
 * -n timed iterations, -w warm-up iterations, -g accepted for compatibility (one "device" a rank).
 * Build: mpicc -O2 -o all_reduce_perf all_reduce_perf.c (Debian: libopenmpi-dev). Launch:
 * srun --mpi=pmix -N2 ./all_reduce_perf -b 1M -e 16M, or mpirun -np 2 --host a,b ./all_reduce_perf.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t parse_size(const char *s) {
    char *end = NULL;
    double v = strtod(s, &end);
    switch (end && *end ? *end : ' ') {
        case 'K': case 'k': v *= 1024.0; break;
        case 'M': case 'm': v *= 1024.0 * 1024.0; break;
        case 'G': case 'g': v *= 1024.0 * 1024.0 * 1024.0; break;
        default: break;
    }
    return (size_t)v;
}

/* seconds per iteration of ITERS allreduces, the slowest rank's */
static double timed(float *send, float *recv, size_t count, int iters, int in_place) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    double mine = (MPI_Wtime() - t0) / iters, slowest = 0.0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

static long wrong(const float *buf, size_t count, float want) {
    long bad = 0;
    for (size_t i = 0; i < count; i++) bad += buf[i] != want;
    long all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

int main(int argc, char **argv) {
    size_t lo = 1 << 20, hi = 16 << 20;
    int factor = 2, iters = 5, warmup = 2, gpus = 1, opt;
    while ((opt = getopt(argc, argv, "b:e:f:n:w:g:c:d:o:t:")) != -1) {
        switch (opt) {
            case 'b': lo = parse_size(optarg); break;
            case 'e': hi = parse_size(optarg); break;
            case 'f': factor = atoi(optarg); break;
            case 'n': iters = atoi(optarg); break;
            case 'w': warmup = atoi(optarg); break;
            case 'g': gpus = atoi(optarg); break;
            default: break; /* other nccl-tests options are accepted and ignored */
        }
    }
    if (factor < 2) factor = 2;
    if (iters < 1) iters = 1;
    if (lo < 4) lo = 4;
    if (hi < lo) hi = lo;

    MPI_Init(&argc, &argv);
    int rank = 0, n = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);

    char host[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0;
    MPI_Get_processor_name(host, &len);
    char *hosts = rank == 0 ? calloc((size_t)n, MPI_MAX_PROCESSOR_NAME) : NULL;
    int pid = (int)getpid(), *pids = rank == 0 ? calloc((size_t)n, sizeof(int)) : NULL;
    MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Gather(&pid, 1, MPI_INT, pids, 1, MPI_INT, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        printf("# nThread 1 nGpus %d minBytes %zu maxBytes %zu step: %d(factor) warmup iters: %d iters: %d "
               "agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n", gpus, lo, hi, factor, warmup, iters);
        for (int r = 0; r < n; r++) {
            /* the "device" of a rank: its index among the ranks on its host */
            int local = 0;
            for (int q = 0; q < r; q++) local += strcmp(hosts + (size_t)q * MPI_MAX_PROCESSOR_NAME,
                                                       hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME) == 0;
            printf("#  Rank %2d Group  0 Pid %6d on %s device %2d [0x00] MPI over TCP (no GPU)\n", r, pids[r],
                   hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME, local);
        }
        printf("#\n#                                                              out-of-place                 "
               "      in-place\n#       size         count      type   redop    root     time   algbw   busbw "
               "#wrong     time   algbw   busbw #wrong\n#        (B)    (elements)                               "
               "(us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n");
        fflush(stdout);
    }

    size_t max_count = hi / sizeof(float);
    float *send = malloc(max_count * sizeof(float)), *recv = malloc(max_count * sizeof(float));
    if (!send || !recv) MPI_Abort(MPI_COMM_WORLD, 2);
    const float want = (float)n * (float)(n + 1) / 2.0f;
    const double bus_factor = n > 1 ? 2.0 * (n - 1) / n : 0.0;
    double bus_sum = 0.0;
    long bad_total = 0;
    int sizes = 0;
    for (size_t bytes = lo; bytes <= hi; bytes *= (size_t)factor) {
        size_t count = bytes / sizeof(float);
        double t[2], alg[2];
        long bad[2];
        for (int ip = 0; ip < 2; ip++) {
            for (size_t i = 0; i < count; i++) send[i] = recv[i] = (float)(rank + 1);
            if (warmup > 0) {
                timed(send, recv, count, warmup, ip);
                for (size_t i = 0; i < count; i++) send[i] = recv[i] = (float)(rank + 1);
            }
            /* one checked allreduce, then the timed ones */
            MPI_Allreduce(ip ? MPI_IN_PLACE : send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            bad[ip] = wrong(recv, count, want);
            t[ip] = timed(send, recv, count, iters, ip);
            alg[ip] = (double)(count * sizeof(float)) / t[ip] / 1e9;
        }
        if (rank == 0) {
            printf("  %10zu  %12zu     float     sum      -1  %7.1f  %6.2f  %6.2f  %5ld  %7.1f  %6.2f  %6.2f  %5ld\n",
                   count * sizeof(float), count, t[0] * 1e6, alg[0], alg[0] * bus_factor, bad[0], t[1] * 1e6, alg[1],
                   alg[1] * bus_factor, bad[1]);
            fflush(stdout);
        }
        bus_sum += alg[1] * bus_factor;
        bad_total += bad[0] + bad[1];
        sizes++;
        if (bytes > hi / (size_t)factor) break;
    }
    if (rank == 0) {
        printf("# Out of bounds values : %ld %s\n# Avg bus bandwidth    : %.3f\n#\n", bad_total,
               bad_total ? "FAILED" : "OK", sizes ? bus_sum / sizes : 0.0);
    }
    free(send);
    free(recv);
    MPI_Finalize();
    return bad_total ? 1 : 0;
}
