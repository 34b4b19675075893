/* A plain compiled loop for the exact KONG map with k = 2, h = 2, BFS, p = 1
 * (node labels only): the floor that benchmarks/bench_core.py compares with.
 *
 * Input: n nodes with integer labels in [0, L), m edges (src -> dst; node dst
 * collects from src, neighbors in edge order), graphs as contiguous node
 * ranges gptr[0..G]. Output: the nonzero (graph, column, count) entries,
 * column = (level - 1) * L * L + a * L + b for the bigram (a, b) of level 1
 * or 2 (level 0 holds no bigram). Built with `gcc -O2 -shared -fPIC` by the
 * benchmark into a temporary folder; nothing here is part of the package.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline void add(double *cnt, int32_t *touched, int64_t *nt, int64_t c) {
    if (cnt[c] == 0.0) touched[(*nt)++] = (int32_t)c;
    cnt[c] += 1.0;
}

int64_t kong_floor(int64_t n, int64_t m, const int64_t *src, const int64_t *dst, const int64_t *label,
                   int64_t L, int64_t G, const int64_t *gptr, int64_t *out_row, int32_t *out_col,
                   double *out_val, int64_t cap) {
    int64_t *ptr = calloc((size_t)n + 1, sizeof(int64_t));
    int64_t *fill = malloc((size_t)n * sizeof(int64_t) + 1);
    int64_t *nb = malloc((size_t)m * sizeof(int64_t) + 1);
    int64_t width = 2 * L * L, nnz = 0;
    double *cnt = calloc((size_t)width, sizeof(double));
    int32_t *touched = malloc((size_t)width * sizeof(int32_t));
    if (!ptr || !fill || !nb || !cnt || !touched) return -2;
    for (int64_t e = 0; e < m; e++) ptr[dst[e] + 1]++;
    for (int64_t v = 0; v < n; v++) ptr[v + 1] += ptr[v];
    memcpy(fill, ptr, (size_t)n * sizeof(int64_t));
    for (int64_t e = 0; e < m; e++) nb[fill[dst[e]]++] = src[e]; /* stable: neighbor order kept */
    for (int64_t g = 0; g < G && nnz >= 0; g++) {
        int64_t nt = 0;
        for (int64_t v = gptr[g]; v < gptr[g + 1]; v++) {
            /* level 1: s_v = l(u_1) l(u_2) ... */
            for (int64_t i = ptr[v]; i + 1 < ptr[v + 1]; i++)
                add(cnt, touched, &nt, label[nb[i]] * L + label[nb[i + 1]]);
            /* level 2: s_v = s_{u_1} s_{u_2} ...: the bigrams inside each piece and across pieces */
            int64_t last = -1;
            for (int64_t i = ptr[v]; i < ptr[v + 1]; i++) {
                int64_t u = nb[i];
                if (ptr[u] == ptr[u + 1]) continue; /* empty piece */
                for (int64_t j = ptr[u]; j + 1 < ptr[u + 1]; j++)
                    add(cnt, touched, &nt, L * L + label[nb[j]] * L + label[nb[j + 1]]);
                if (last >= 0) add(cnt, touched, &nt, L * L + last * L + label[nb[ptr[u]]]);
                last = label[nb[ptr[u + 1] - 1]];
            }
        }
        for (int64_t t = 0; t < nt; t++) {
            if (nnz >= cap) { nnz = -1; break; }
            out_row[nnz] = g;
            out_col[nnz] = touched[t];
            out_val[nnz] = cnt[touched[t]];
            nnz++;
        }
        for (int64_t t = 0; t < nt; t++) cnt[touched[t]] = 0.0;
    }
    free(ptr); free(fill); free(nb); free(cnt); free(touched);
    return nnz;
}
