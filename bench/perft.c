/*
 * perft.c - move generator speed: perft 12 from the start position on one
 * core, with bulk counting at the last ply, against a baseline measured in
 * the same run (the same generator driven the plain way: a move list and a
 * make at every node, the last ply included). Exits 1 if any count differs
 * from the published figure, so it doubles as the depth-12 check.
 *
 * Target (issue 2): at least 200 million leaves a second.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_util.h"
#include "engine/engine.h"

/* The baseline: no bulk counting, every leaf made. */
static uint64_t
perft_plain(const eng_pos *p, int depth)
{
    if (depth == 0)
        return 1;
    eng_movelist l;
    int n = eng_generate(p, &l, ENG_DUPS_KEEP);
    uint64_t t = 0;
    for (int i = 0; i < n; i++) {
        eng_pos c;
        eng_make(p, &l.m[i], &c);
        t += perft_plain(&c, depth - 1);
    }
    return t;
}

int
main(void)
{
    eng_pos p;
    eng_start(&p);
    bench_machine();

    double t0 = bench_now();
    uint64_t base = perft_plain(&p, 11);
    double tb = bench_now() - t0;

    t0 = bench_now();
    uint64_t keep = eng_perft(&p, 12, ENG_DUPS_KEEP);
    double tk = bench_now() - t0;

    t0 = bench_now();
    uint64_t merge = eng_perft(&p, 12, ENG_DUPS_MERGE);
    double tm = bench_now() - t0;

    double rb = (double)base / tb, rk = (double)keep / tk, rm = (double)merge / tm;
    printf("baseline  perft 11 (list + make at every node): %" PRIu64
           " leaves, %.3f s, %.1f M leaves/s\n",
           base, tb, rb / 1e6);
    printf("perft 12, routes kept   (bulk last ply): %" PRIu64
           " leaves, %.3f s, %.1f M leaves/s, %.2fx baseline\n",
           keep, tk, rk / 1e6, rk / rb);
    printf("perft 12, routes merged (bulk last ply): %" PRIu64
           " leaves, %.3f s, %.1f M leaves/s, %.2fx baseline\n",
           merge, tm, rm / 1e6, rm / rb);
    printf("target: 200 M leaves/s -> %s\n", rk >= 200e6 ? "met" : "NOT met");

    int bad = 0;
    if (base != 85242128ull) {
        fprintf(stderr, "perft 11 = %" PRIu64 ", published 85242128\n", base);
        bad = 1;
    }
    if (keep != 388623673ull) {
        fprintf(stderr, "perft 12 = %" PRIu64 ", published 388623673\n", keep);
        bad = 1;
    }
    if (merge != 388617999ull) {
        fprintf(stderr, "perft 12 merged = %" PRIu64 ", published 388617999\n", merge);
        bad = 1;
    }
    return bad;
}
