/*
 * test_egdb_build.c - the endgame database builder (egdb_build) against an
 * independent solver, and the database files' life cycle: verification,
 * corruption, interruption and resumption, opening damaged directories.
 *
 * THE INDEPENDENT SOLVER (why it is independent)
 *   The builder's values are only as good as its index (egdb/index.c), its
 *   un-move generator and its propagation (egdb/build.c). This file solves
 *   the same positions again with code that shares nothing with them but
 *   the rules engine's forward move generation (eng_generate) and colour
 *   flip (eng_flip); even the successor is made here from the move's
 *   fields (solver_make), not by eng_make. egdb is used only through its
 *   public egdb_build, egdb_open and egdb_probe to obtain the database's
 *   answers (plus egdb_verify and egix_slice_name in the file-level tests,
 *   never in the solver).
 *     - Indexing: a "dense" index of its own, one per material (black
 *       kings, white kings, black men, white men): the four piece sets are
 *       colex-ranked independently (black men over squares 1-28, white men
 *       over 5-32, kings over all 32) and combined in mixed radix; ranks
 *       are unranked through tables of every k-subset made by stepping
 *       through them in numeric order (Gosper's hack). Sets that overlap
 *       are holes marked INVALID, so there is no slice, no leading rank,
 *       no pext and no offset table. 5 pieces take 190.6 million dense
 *       entries (a byte each) for 148.7 million placements.
 *     - Graph: positions are solved per material pair {M, colour swap of
 *       M} (a Black-to-move position's successors, turned to Black to move
 *       with eng_flip, have the swapped material unless the move captures
 *       or crowns). Materials go by piece count, then by number of men, so
 *       every capture (fewer pieces) and every promotion (one man fewer)
 *       lands in a material already solved. Each position's moves are
 *       generated FORWARD once; moves leaving the pair are looked up, moves
 *       inside it become explicit edges.
 *     - Values, twice, by two algorithms that must agree on every
 *       placement: (1) plain value iteration on those edges (passes until
 *       nothing changes: win if some move leads to a lost position, loss
 *       if every move leads to a won one or there is no move; the rest are
 *       draws; in-place updates are safe because a value is only ever set
 *       from final values) - this is the reference; (2) retrograde
 *       counting with predecessor lists obtained by INVERTING the forward
 *       edges (the builder instead generates predecessors with un-moves,
 *       so a missing or extra un-move there cannot be mirrored here).
 *
 * WHY AN EXHAUSTIVE 5-PIECE SOLVE RATHER THAN A SAMPLE CLOSURE
 *   From almost any 5-piece position with kings, the non-capture closure
 *   is the whole material pair, so the closures of 100,000 random samples
 *   cover nearly every 5-piece position anyway. Solving all of them costs
 *   (measured, 2 cores, release): about 28 s for 1-5 pieces (forward
 *   generation 9 s, value iteration 11 s with at most 56 passes,
 *   inversion and retrograde 10 s), 1.15 GB peak (the largest pair,
 *   1 black king, 1 white king, 2 black men, 1 white man, and its swap:
 *   24.9 million dense entries). That buys an EXHAUSTIVE comparison of 5
 *   pieces, on top of the required random sample.
 *
 * WHAT IS COMPARED
 *   - 1-4 pieces: every placement, BOTH sides to move (Black to move as
 *     stored, and the same placement with White to move, whose value the
 *     solver knows as its colour-flipped twin): 2 x (120 + 6,972 + 261,224
 *     + 7,092,774) = 14,722,180 probes; the placement counts must equal
 *     the published totals (seed 002 Table 4).
 *   - 5 pieces (not under CHECKERS_SANITIZED): 200,000 seeded-random
 *     placements (uniform: rejection sampling over the dense index) with a
 *     random side to move, then every placement with Black to move
 *     (148,688,232, must equal the published total).
 *   - colour flip: egdb_probe(p) == egdb_probe(eng_flip(p)) on 100,000
 *     random positions of 1-4 pieces (and of 5).
 *   - egdb_verify on the fresh build; a flipped payload byte is
 *     EGDB_ECORRUPT naming the file; a WIN rewritten as a LOSS with the
 *     counts and both checksums repaired is EGDB_EVERIFY naming the slice.
 *   - a build stopped through opts.stop, resumed, is byte-identical to an
 *     uninterrupted one; a build of a complete directory builds nothing.
 *   - a truncated file makes egdb_open fail with its path in the message;
 *     a position with too many pieces is EGDB_ENOTFOUND.
 *   - a king's capture cycle back to its own square keeps the king
 *     (eng_make, which the builder uses for every capture).
 *   The directories hold the build files (.wld) only; egdb_compress is not
 *   run, so every probe here reads the builder's own values.
 *
 * COST (2 cores; builds write to $TMPDIR, default /tmp, and fsync)
 *   release: 75 s on an idle machine, about 2 minutes with another build
 *   running (the 5-piece build 20-45 s, the 1-5 piece solve 30-45 s).
 *   CHECKERS_SANITIZED: 15 s idle, 45 s loaded; 5 pieces are skipped
 *   (neither built nor solved), everything else, exhaustive up to 4
 *   pieces, stays.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "egdb/egdb.h"
#include "egdb/pipeline.h"
#include "egdb/stage.h" /* egvf_set_wins_block_min, for the check of wins */
#include "egdb/index.h" /* egix_slice_name only, for the file-level tests */
#include "engine/engine.h"
#include "tests/test_util.h"

/* ---- constants -------------------------------------------------------- */

#define SOLVE_MAX 5                 /* the solver handles up to 5 pieces     */
#define NMAT (6 * 6 * 6 * 6)        /* material keys: counts 0..5, base 6    */
#define CHUNK 65536u                /* positions per unit of parallel work   */
#define MAX_INGROUP (4 * SOLVE_MAX) /* non-captures: 4 per king at most      */
#define MAX_THREADS 8
#define NLOG 8           /* disagreements printed in full       */
#define SAMPLES_5 200000 /* random 5-piece positions, both sides */
#define SAMPLES_FLIP 100000
#define HEADER_BYTES 64                /* slice file header (store.h)         */
#define CACHE_BYTES ((size_t)64 << 20) /* egdb_open's block cache      */
#define SEED ((uint64_t)0x5EEDC0FFEE2024ull)

/* The solver's values. WIN/LOSS/DRAW are numbered as enum egdb_value, but
 * every comparison goes through to_egdb() all the same. */
enum { V_UNKNOWN = 0, V_WIN = 1, V_LOSS = 2, V_DRAW = 3, V_INVALID = 4 };
#define V_MASK 0x0f
#define F_EXTDRAW 0x10 /* a move leaving the pair leads to a draw */

/* Published placement counts, Black to move (seed 002 Table 4). */
static const uint64_t published[SOLVE_MAX + 1] = {0, 120, 6972, 261224, 7092774, 148688232};

/* ---- types ------------------------------------------------------------ */

/* One material and the radices of its dense index. */
typedef struct mat {
    int nbk, nwk, nbm, nwm;
    int key;
    uint64_t rbm, rwm, rbk, rwk; /* number of ranks of each piece set */
    uint64_t size;               /* dense entries, holes included      */
} mat;

/* Disagreements, kept for the report (first NLOG in full). */
typedef struct mlog {
    pthread_mutex_t mu;
    uint64_t n;
    char line[NLOG][320];
} mlog;

typedef struct solver {
    uint64_t C[33][SOLVE_MAX + 1]; /* binomials C(n, k)                  */
    uint32_t *sets[SOLVE_MAX + 1]; /* k-subsets of 32 squares by colex rank */
    uint8_t *vals[NMAT];           /* final V_* by dense index, or NULL  */
    uint8_t *owned[NMAT];          /* the allocations behind vals        */
    int nowned;
    int threads;
    int vi_max; /* value iteration (and the cross-check) up to this many pieces */
    int solved; /* every material up to this many pieces is solved */
    uint64_t vi_passes_max;
    uint64_t groups, edges;
    double t_gen, t_rev, t_bfs, t_vi; /* seconds by phase */
    uint64_t cross_checked;           /* positions solved by both algorithms */
    mlog cross;                       /* where value iteration and retrograde differ */
    atomic_int fail;                  /* an impossible state (unsolved successor...) */
    char fail_msg[512];
} solver;

/* One material pair being solved: member 0 is M, member 1 its colour
 * swap (absent when M is symmetric). Node ids: M's dense entries, then the
 * swap's. */
typedef struct group {
    solver *s;
    mat m[2];
    int nmem;
    uint64_t base1; /* first node of member 1 */
    uint64_t n;
    uint64_t nchunks;
    uint8_t *st;      /* V_* | F_EXTDRAW after generation            */
    uint8_t *deg;     /* edges inside the pair (0 when already won)   */
    uint32_t **edges; /* per chunk: the edges of its nodes in order    */
    uint64_t *nedges; /* per chunk                                     */
} group;

typedef void (*chunk_fn)(void *arg, uint64_t chunk, void *scratch);

typedef struct pfor {
    atomic_uint_fast64_t next;
    uint64_t nchunks;
    chunk_fn fn;
    void *arg;
    size_t scratch_bytes;
} pfor;

/* Comparison of every placement of one material with the database. */
typedef struct cmp_job {
    const solver *s;
    const egdb *db;
    mat m;
    int both_sides;
    atomic_uint_fast64_t placements, probes, mismatches;
    mlog *log;
} cmp_job;

/* Everything the tests share (built once by the group setup). */
typedef struct ctx {
    char root[256];
    char dir_a[320]; /* fresh 4-piece build */
    egdb *db4;
    solver sv;
    int threads;
    size_t nwld4; /* slice files of 1-4 pieces */
} ctx;

/* ---- static data ------------------------------------------------------ */

static ctx *g_ctx; /* the tests' shared state (a test program, not a library) */

/* ---- helpers: general ---------------------------------------------------- */

static double
now_sec(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* splitmix64: small, seeded, the same sequence everywhere. */
static uint64_t
rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int
popc(uint32_t x)
{
    return __builtin_popcount(x);
}

static int
pieces_of(const eng_pos *p)
{
    return popc(p->bm | p->wm | p->bk | p->wk);
}

static int
to_egdb(int v)
{
    switch (v & V_MASK) {
    case V_WIN:
        return EGDB_WIN;
    case V_LOSS:
        return EGDB_LOSS;
    case V_DRAW:
        return EGDB_DRAW;
    default:
        return -100; /* never a database answer */
    }
}

static const char *
value_word(int egdb_value)
{
    switch (egdb_value) {
    case EGDB_WIN:
        return "win";
    case EGDB_LOSS:
        return "loss";
    case EGDB_DRAW:
        return "draw";
    default:
        return egdb_value < 0 ? egdb_strerror(egdb_value) : "?";
    }
}

static void
mlog_init(mlog *l)
{
    memset(l, 0, sizeof *l);
    pthread_mutex_init(&l->mu, NULL);
}

/* Records a disagreement on p: what the database (or the first method)
 * says and what the independent solver (or the second) says. */
static void
mlog_add(mlog *l, const char *what, const eng_pos *p, int a, int b)
{
    char fen[ENG_FEN_MAX];
    eng_format_fen(p, fen, sizeof fen);
    pthread_mutex_lock(&l->mu);
    if (l->n < NLOG)
        snprintf(l->line[l->n], sizeof l->line[l->n], "%s\t%s %s, independent %s", fen, what,
                 value_word(a), value_word(b));
    l->n++;
    pthread_mutex_unlock(&l->mu);
}

static void
mlog_print(const mlog *l, const char *title)
{
    if (l->n == 0)
        return;
    printf("# %s: %" PRIu64 " disagreements, first ones:\n", title, l->n);
    for (uint64_t i = 0; i < l->n && i < NLOG; i++)
        printf("#   %s\n", l->line[i]);
}

/* Runs fn on chunks 0..nchunks-1 with `threads` threads, each with its own
 * scratch buffer of scratch_bytes. */
static void *
pfor_worker(void *arg)
{
    pfor *p = arg;
    void *scratch = p->scratch_bytes ? malloc(p->scratch_bytes) : NULL;
    if (p->scratch_bytes && !scratch)
        abort();
    for (;;) {
        uint64_t k = atomic_fetch_add(&p->next, 1);
        if (k >= p->nchunks)
            break;
        p->fn(p->arg, k, scratch);
    }
    free(scratch);
    return NULL;
}

static void
pfor_run(int threads, uint64_t nchunks, chunk_fn fn, void *arg, size_t scratch_bytes)
{
    pfor p;
    atomic_init(&p.next, 0);
    p.nchunks = nchunks;
    p.fn = fn;
    p.arg = arg;
    p.scratch_bytes = scratch_bytes;
    pthread_t tid[MAX_THREADS];
    int started = 0;
    for (int t = 1; t < threads && t < MAX_THREADS; t++)
        if (pthread_create(&tid[started], NULL, pfor_worker, &p) == 0)
            started++;
    pfor_worker(&p);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
}

/* Large working arrays: 2 MB aligned and marked for transparent huge
 * pages, which halves the solver's time spent in page faults and TLB
 * misses on the largest material pairs. Freed with free(). */
static void *
big_alloc(size_t bytes, int zero)
{
    size_t align = (size_t)2 << 20, n = (bytes + align - 1) / align * align;
    void *p = aligned_alloc(align, n ? n : align);
    if (!p)
        return NULL;
    madvise(p, n, MADV_HUGEPAGE);
    if (zero)
        memset(p, 0, bytes);
    return p;
}

/* ---- helpers: files ------------------------------------------------------ */

static uint8_t *
read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && n > 0 && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = n > 0 ? (size_t)n : 0;
    return b;
}

static int
write_file(const char *path, const uint8_t *b, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(b, 1, len, f) == len;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

static int
name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
is_wld(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, ".wld");
}

/* The sorted names of the .wld files of dir (malloc'ed; free_names). */
static char **
list_wld(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    size_t cap = 64;
    char **v = malloc(cap * sizeof *v);
    *n = 0;
    assert_non_null(v);
    if (!d)
        return v;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!is_wld(e->d_name))
            continue;
        if (*n == cap) {
            cap *= 2;
            v = realloc(v, cap * sizeof *v);
            assert_non_null(v);
        }
        v[(*n)++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(v, *n, sizeof *v, name_cmp);
    return v;
}

static void
free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Copies every .wld file of src into dst (created). */
static void
copy_wld(const char *src, const char *dst)
{
    size_t n;
    char **v = list_wld(src, &n);
    assert_true(mkdir(dst, 0755) == 0 || errno == EEXIST);
    for (size_t i = 0; i < n; i++) {
        char a[600], b[600];
        size_t len;
        snprintf(a, sizeof a, "%s/%s", src, v[i]);
        snprintf(b, sizeof b, "%s/%s", dst, v[i]);
        uint8_t *buf = read_file(a, &len);
        assert_non_null(buf);
        assert_int_equal(write_file(b, buf, len), 0);
        free(buf);
    }
    free_names(v, n);
}

/* Removes dir and everything under it. */
static void
rm_rf(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char p[1024];
            struct stat st;
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
                rm_rf(p);
            else
                unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

static uint64_t
get64(const uint8_t *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

static void
put64(uint8_t *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

/* ---- the independent solver: dense index ------------------------------------ */

/* Colex rank of a set: its i-th smallest element s (i from 1) adds C(s, i). */
static uint64_t
colex_rank(const solver *s, uint32_t set)
{
    uint64_t r = 0;
    for (int i = 1; set; i++, set &= set - 1)
        r += s->C[__builtin_ctz(set)][i];
    return r;
}

static void
solver_init(solver *s, int threads)
{
    memset(s, 0, sizeof *s);
    for (int n = 0; n <= 32; n++)
        for (int k = 0; k <= SOLVE_MAX; k++)
            s->C[n][k] = k == 0 ? 1 : n == 0 ? 0 : s->C[n - 1][k - 1] + s->C[n - 1][k];
    /* Gosper's hack steps through the k-subsets in increasing numeric
     * order, which is colex order: entry r is the set of colex rank r.
     * The subsets of squares 0..27 are the first C(28, k) entries. */
    for (int k = 0; k <= SOLVE_MAX; k++) {
        s->sets[k] = malloc(s->C[32][k] * sizeof *s->sets[k]);
        assert_non_null(s->sets[k]);
        uint64_t x = (1ull << k) - 1, r = 0;
        while (x < (1ull << 32)) {
            assert_int_equal(colex_rank(s, (uint32_t)x), r);
            s->sets[k][r++] = (uint32_t)x;
            if (x == 0)
                break;
            uint64_t low = x & -x, ripple = x + low;
            x = (((ripple ^ x) >> 2) / low) | ripple;
        }
        assert_int_equal(r, s->C[32][k]);
    }
    s->threads = threads;
    s->vi_max = SOLVE_MAX;
    mlog_init(&s->cross);
    atomic_init(&s->fail, 0);
}

static void
solver_free(solver *s)
{
    for (int i = 0; i < s->nowned; i++)
        free(s->owned[i]);
    for (int k = 0; k <= SOLVE_MAX; k++)
        free(s->sets[k]);
    memset(s->vals, 0, sizeof s->vals);
    s->nowned = 0;
}

static int
mat_key(int nbk, int nwk, int nbm, int nwm)
{
    return ((nbk * 6 + nwk) * 6 + nbm) * 6 + nwm;
}

static void
mat_make(const solver *s, int nbk, int nwk, int nbm, int nwm, mat *m)
{
    m->nbk = nbk;
    m->nwk = nwk;
    m->nbm = nbm;
    m->nwm = nwm;
    m->key = mat_key(nbk, nwk, nbm, nwm);
    m->rbm = s->C[28][nbm];
    m->rwm = s->C[28][nwm];
    m->rbk = s->C[32][nbk];
    m->rwk = s->C[32][nwk];
    m->size = m->rbm * m->rwm * m->rbk * m->rwk;
}

/* The key of p's material, or -1 when a count exceeds the solver's range. */
static int
pos_key(const eng_pos *p)
{
    int bk = popc(p->bk), wk = popc(p->wk), bm = popc(p->bm), wm = popc(p->wm);
    if (bk + wk + bm + wm > SOLVE_MAX)
        return -1;
    return mat_key(bk, wk, bm, wm);
}

/* Dense index of p (Black to move) in its material m. Black men are ranked
 * over squares 1-28 (bits 0..27), white men over 5-32 (bits 4..31, shifted
 * down), kings over all 32; black men vary slowest, white kings fastest. */
static uint64_t
dense_index(const solver *s, const mat *m, const eng_pos *p)
{
    uint64_t i = colex_rank(s, p->bm);
    i = i * m->rwm + colex_rank(s, p->wm >> 4);
    i = i * m->rbk + colex_rank(s, p->bk);
    return i * m->rwk + colex_rank(s, p->wk);
}

/* The placement of dense index i (Black to move); 0 for a hole (two piece
 * sets overlap), 1 for a real placement. */
static int
dense_unindex(const solver *s, const mat *m, uint64_t i, eng_pos *p)
{
    p->wk = s->sets[m->nwk][i % m->rwk];
    i /= m->rwk;
    p->bk = s->sets[m->nbk][i % m->rbk];
    i /= m->rbk;
    p->wm = s->sets[m->nwm][i % m->rwm] << 4;
    i /= m->rwm;
    p->bm = s->sets[m->nbm][i];
    p->stm = ENG_BLACK;
    uint32_t all = p->bm | p->wm | p->bk | p->wk;
    return popc(all) == m->nbk + m->nwk + m->nbm + m->nwm;
}

/* The solved value (V_*) of a Black-to-move position, or V_UNKNOWN when
 * its material is not solved. */
static int
solver_value(const solver *s, const eng_pos *p)
{
    int k = pos_key(p);
    if (k < 0 || !s->vals[k])
        return V_UNKNOWN;
    mat m;
    mat_make(s, popc(p->bk), popc(p->wk), popc(p->bm), popc(p->wm), &m);
    return s->vals[k][dense_index(s, &m, p)] & V_MASK;
}

/* The value of any position (either side to move) for its side to move. */
static int
solver_value_any(const solver *s, const eng_pos *p)
{
    eng_pos c = p->stm == ENG_BLACK ? *p : eng_flip(p);
    return solver_value(s, &c);
}

/* Records the first impossible state met: what, at which position, and
 * for a successor, after which move (the successor is shown as Black to
 * move, i.e. colour-flipped). */
static void
solver_failf(solver *s, const char *what, const eng_pos *p, const eng_move *m, const eng_pos *c)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(&s->fail, &expected, 1)) {
        char fen[ENG_FEN_MAX], cfen[ENG_FEN_MAX] = "", mv[ENG_MOVE_STR_MAX] = "";
        eng_format_fen(p, fen, sizeof fen);
        if (m)
            eng_format_move(m, mv, sizeof mv);
        if (c)
            eng_format_fen(c, cfen, sizeof cfen);
        snprintf(s->fail_msg, sizeof s->fail_msg, "%s: %s %s %s", what, fen, mv, cfen);
    }
}

/* ---- the independent solver: one material pair ------------------------------ */

/*
 * The successor of Black-to-move p after m, from the move's fields alone
 * (not eng_make: eng_make loses the king of a capture cycle that ends on
 * its starting square, e.g. B:WK7,K8,K15,K16,K32:BK3, 3x10x19x12x3, where
 * `bk ^= from | to` with from == to removes the king; see
 * test_capture_cycle_successor).
 */
static void
solver_make(const eng_pos *p, const eng_move *m, eng_pos *out)
{
    uint32_t from = 1u << m->from, to = 1u << m->to;
    eng_pos r = *p;
    if (r.bk & from) {
        r.bk = (r.bk & ~from) | to;
    } else {
        r.bm &= ~from;
        if (m->to >= 28) /* squares 29-32: crowned */
            r.bk |= to;
        else
            r.bm |= to;
    }
    r.wm &= ~m->captured;
    r.wk &= ~m->captured;
    r.stm = ENG_WHITE;
    *out = r;
}

/* Generates the moves of every node of one chunk: successors outside the
 * pair are looked up (captures: fewer pieces; promotions: one man fewer,
 * both solved before), successors inside it become edges. */
static void
group_gen_chunk(void *arg, uint64_t k, void *scratch)
{
    group *g = arg;
    solver *s = g->s;
    uint32_t *buf = scratch;
    uint64_t lo = k * CHUNK, hi = lo + CHUNK < g->n ? lo + CHUNK : g->n, ne = 0;
    eng_movelist *l = malloc(sizeof *l);
    if (!l)
        abort();
    for (uint64_t id = lo; id < hi; id++) {
        int mem = g->nmem == 2 && id >= g->base1;
        eng_pos p;
        g->deg[id] = 0;
        if (!dense_unindex(s, &g->m[mem], id - (mem ? g->base1 : 0), &p)) {
            g->st[id] = V_INVALID;
            continue;
        }
        int nm = eng_generate(&p, l, ENG_DUPS_MERGE);
        if (nm < 0) {
            solver_failf(s, "move list overflow", &p, NULL, NULL);
            nm = 0;
        }
        int win = 0, extdraw = 0;
        uint64_t e0 = ne;
        for (int j = 0; j < nm; j++) {
            eng_pos c;
            solver_make(&p, &l->m[j], &c);
            c = eng_flip(&c); /* the opponent to move, as Black */
            int ck = pos_key(&c);
            int in = ck == g->m[0].key ? 0 : (g->nmem == 2 && ck == g->m[1].key) ? 1 : -1;
            if (in >= 0) {
                if (ne - e0 >= MAX_INGROUP) {
                    solver_failf(s, "more non-captures than expected", &p, &l->m[j], NULL);
                    break;
                }
                buf[ne++] = (uint32_t)((in ? g->base1 : 0) + dense_index(s, &g->m[in], &c));
                continue;
            }
            int cv = solver_value(s, &c);
            if (cv == V_LOSS)
                win = 1;
            else if (cv == V_DRAW)
                extdraw = 1;
            else if (cv != V_WIN)
                solver_failf(s, "successor outside the pair not solved", &p, &l->m[j], &c);
        }
        if (win) {
            g->st[id] = V_WIN; /* its edges are not needed */
            ne = e0;
        } else if (nm == 0) {
            g->st[id] = V_LOSS;
        } else if (ne == e0) {
            g->st[id] = extdraw ? V_DRAW : V_LOSS;
        } else {
            g->st[id] = (uint8_t)(V_UNKNOWN | (extdraw ? F_EXTDRAW : 0));
            g->deg[id] = (uint8_t)(ne - e0);
        }
    }
    free(l);
    g->nedges[k] = ne;
    g->edges[k] = NULL;
    if (ne) {
        g->edges[k] = malloc(ne * sizeof *buf);
        if (!g->edges[k])
            abort();
        memcpy(g->edges[k], buf, ne * sizeof *buf);
    }
}

/* Plain value iteration over the pair's edges, in place. Returns the
 * number of passes (the last one changes nothing). */
static uint64_t
group_value_iteration(const group *g, uint8_t *st)
{
    uint64_t passes = 0;
    int changed;
    do {
        changed = 0;
        passes++;
        for (uint64_t k = 0; k < g->nchunks; k++) {
            const uint32_t *e = g->edges[k];
            uint64_t hi = (k + 1) * CHUNK < g->n ? (k + 1) * CHUNK : g->n;
            for (uint64_t id = k * CHUNK; id < hi; id++) {
                int d = g->deg[id];
                if (d && (st[id] & V_MASK) == V_UNKNOWN) {
                    int lost_child = 0, all_won = !(st[id] & F_EXTDRAW);
                    for (int j = 0; j < d && !lost_child; j++) {
                        int cv = st[e[j]] & V_MASK;
                        lost_child = cv == V_LOSS;
                        all_won &= cv == V_WIN;
                    }
                    if (lost_child || all_won) {
                        st[id] = lost_child ? V_WIN : V_LOSS;
                        changed = 1;
                    }
                }
                e += d;
            }
        }
    } while (changed);
    for (uint64_t id = 0; id < g->n; id++)
        st[id] = (st[id] & V_MASK) == V_UNKNOWN ? V_DRAW : (st[id] & V_MASK);
    return passes;
}

/* Retrograde counting on the inverted edges: every unknown node counts its
 * moves not yet known to lose for it (pair edges, plus one for a drawn
 * move out of the pair, which never goes away); a lost node makes its
 * predecessors won, a won node decrements them and the last one makes
 * them lost. */
static void
group_retrograde(const group *g, uint8_t *st)
{
    uint64_t n = g->n, ne = 0;
    double t0 = now_sec();
    for (uint64_t k = 0; k < g->nchunks; k++)
        ne += g->nedges[k];
    g->s->edges += ne;
    assert_true(ne < UINT32_MAX && n < UINT32_MAX);
    uint32_t *roff = big_alloc((n + 1) * sizeof *roff, 1);
    uint32_t *rev = big_alloc((ne ? ne : 1) * sizeof *rev, 0);
    uint8_t *cnt = big_alloc(n, 0);
    uint32_t *queue = big_alloc(n * sizeof *queue, 0);
    assert_true(roff && rev && cnt && queue);
    for (uint64_t k = 0; k < g->nchunks; k++)
        for (uint64_t j = 0; j < g->nedges[k]; j++)
            roff[g->edges[k][j] + 1]++;
    for (uint64_t i = 0; i < n; i++)
        roff[i + 1] += roff[i];
    /* Fill: roff[c] walks from the start of c's list to its end, which is
     * the start of c + 1; shifted back afterwards. */
    for (uint64_t k = 0; k < g->nchunks; k++) {
        const uint32_t *e = g->edges[k];
        uint64_t hi = (k + 1) * CHUNK < n ? (k + 1) * CHUNK : n;
        for (uint64_t id = k * CHUNK; id < hi; id++)
            for (int j = 0; j < g->deg[id]; j++)
                rev[roff[*e++]++] = (uint32_t)id;
    }
    for (uint64_t i = n; i > 0; i--)
        roff[i] = roff[i - 1];
    roff[0] = 0;
    double t1 = now_sec();
    g->s->t_rev += t1 - t0;

    uint64_t head = 0, tail = 0;
    for (uint64_t id = 0; id < n; id++) {
        cnt[id] = (uint8_t)(g->deg[id] + ((st[id] & F_EXTDRAW) ? 1 : 0));
        int v = st[id] & V_MASK;
        if (v == V_WIN || v == V_LOSS)
            queue[tail++] = (uint32_t)id;
    }
    while (head < tail) {
        uint32_t q = queue[head++];
        int qv = st[q] & V_MASK;
        for (uint32_t r = roff[q]; r < roff[q + 1]; r++) {
            uint32_t p = rev[r];
            if ((st[p] & V_MASK) != V_UNKNOWN)
                continue;
            if (qv == V_LOSS) {
                st[p] = V_WIN;
                queue[tail++] = p;
            } else if (--cnt[p] == 0) {
                st[p] = V_LOSS;
                queue[tail++] = p;
            }
        }
    }
    for (uint64_t id = 0; id < n; id++)
        st[id] = (st[id] & V_MASK) == V_UNKNOWN ? V_DRAW : (st[id] & V_MASK);
    g->s->t_bfs += now_sec() - t1;
    free(roff);
    free(rev);
    free(cnt);
    free(queue);
}

/* Solves the pair of material m (and its colour swap). */
static void
solve_group(solver *s, const mat *m)
{
    group g;
    memset(&g, 0, sizeof g);
    g.s = s;
    g.m[0] = *m;
    mat_make(s, m->nwk, m->nbk, m->nwm, m->nbm, &g.m[1]);
    g.nmem = g.m[1].key == m->key ? 1 : 2;
    g.base1 = m->size;
    g.n = m->size + (g.nmem == 2 ? g.m[1].size : 0);
    g.nchunks = (g.n + CHUNK - 1) / CHUNK;
    g.st = big_alloc(g.n, 0);
    g.deg = big_alloc(g.n, 0);
    g.edges = calloc(g.nchunks, sizeof *g.edges);
    g.nedges = calloc(g.nchunks, sizeof *g.nedges);
    assert_true(g.st && g.deg && g.edges && g.nedges);
    double t0 = now_sec();
    pfor_run(s->threads, g.nchunks, group_gen_chunk, &g, CHUNK * MAX_INGROUP * sizeof(uint32_t));
    s->t_gen += now_sec() - t0;

    int npieces = m->nbk + m->nwk + m->nbm + m->nwm;
    uint8_t *fin = g.st; /* solved in place */
    if (npieces <= s->vi_max) {
        /* The reference: value iteration; the retrograde must agree. */
        uint8_t *vi = big_alloc(g.n, 0);
        assert_non_null(vi);
        memcpy(vi, g.st, g.n);
        t0 = now_sec();
        uint64_t passes = group_value_iteration(&g, vi);
        s->t_vi += now_sec() - t0;
        group_retrograde(&g, fin);
        if (passes > s->vi_passes_max)
            s->vi_passes_max = passes;
        for (uint64_t id = 0; id < g.n; id++) {
            if (vi[id] == V_INVALID)
                continue;
            s->cross_checked++;
            if (vi[id] != fin[id]) {
                int mem = g.nmem == 2 && id >= g.base1;
                eng_pos p;
                dense_unindex(s, &g.m[mem], id - (mem ? g.base1 : 0), &p);
                mlog_add(&s->cross, "retrograde", &p, to_egdb(fin[id]), to_egdb(vi[id]));
            }
        }
        memcpy(fin, vi, g.n);
        free(vi);
    } else {
        group_retrograde(&g, fin);
    }
    s->owned[s->nowned++] = fin;
    for (int i = 0; i < g.nmem; i++)
        s->vals[g.m[i].key] = fin + (i ? g.base1 : 0);
    s->groups++;
    for (uint64_t k = 0; k < g.nchunks; k++)
        free(g.edges[k]);
    free(g.edges);
    free(g.nedges);
    free(g.deg);
}

/* Solves every material of s->solved + 1 .. npieces pieces: by piece
 * count, then by number of men (captures and promotions land in what is
 * already solved). */
static void
solver_solve(solver *s, int npieces)
{
    for (int n = s->solved + 1; n <= npieces; n++) {
        for (int men = 0; men <= n; men++)
            for (int nbm = 0; nbm <= men; nbm++)
                for (int nbk = 0; nbk <= n - men; nbk++) {
                    mat m;
                    mat_make(s, nbk, n - men - nbk, nbm, men - nbm, &m);
                    if (!s->vals[m.key])
                        solve_group(s, &m);
                }
        s->solved = n;
    }
}

/* A uniformly random placement of n pieces (Black to move): a uniform
 * dense entry over all materials of n pieces, holes rejected. */
static void
random_placement(const solver *s, int n, uint64_t *rng, eng_pos *p)
{
    uint64_t total = 0;
    for (int bk = 0; bk <= n; bk++)
        for (int wk = 0; wk <= n - bk; wk++)
            for (int bm = 0; bm <= n - bk - wk; bm++) {
                mat m;
                mat_make(s, bk, wk, bm, n - bk - wk - bm, &m);
                total += m.size;
            }
    for (;;) {
        uint64_t r = rng_next(rng) % total;
        for (int bk = 0; bk <= n; bk++)
            for (int wk = 0; wk <= n - bk; wk++)
                for (int bm = 0; bm <= n - bk - wk; bm++) {
                    mat m;
                    mat_make(s, bk, wk, bm, n - bk - wk - bm, &m);
                    if (r < m.size) {
                        if (dense_unindex(s, &m, r, p))
                            return;
                        goto again;
                    }
                    r -= m.size;
                }
    again:;
    }
}

static void
solver_print_times(const solver *s)
{
    printf("#   so far: forward generation %.1f s, value iteration %.1f s, inversion %.1f s, "
           "retrograde %.1f s; %" PRIu64 " edges inside pairs\n",
           s->t_gen, s->t_vi, s->t_rev, s->t_bfs, s->edges);
}

/* ---- comparing with the database -------------------------------------------- */

static void
cmp_chunk(void *arg, uint64_t k, void *scratch)
{
    cmp_job *j = arg;
    const uint8_t *vals = j->s->vals[j->m.key];
    uint64_t lo = k * CHUNK, hi = lo + CHUNK < j->m.size ? lo + CHUNK : j->m.size;
    uint64_t placements = 0, probes = 0, bad = 0;
    (void)scratch;
    for (uint64_t i = lo; i < hi; i++) {
        eng_pos p;
        if (!dense_unindex(j->s, &j->m, i, &p))
            continue;
        placements++;
        int mine = to_egdb(vals[i]), db = egdb_probe(j->db, &p);
        probes++;
        if (db != mine) {
            bad++;
            mlog_add(j->log, "database", &p, db, mine);
        }
        if (j->both_sides) {
            /* The same placement with White to move: the solver knows it
             * as its colour-flipped twin. */
            eng_pos w = p;
            w.stm = ENG_WHITE;
            mine = to_egdb(solver_value_any(j->s, &w));
            db = egdb_probe(j->db, &w);
            probes++;
            if (db != mine) {
                bad++;
                mlog_add(j->log, "database", &w, db, mine);
            }
        }
    }
    atomic_fetch_add(&j->placements, placements);
    atomic_fetch_add(&j->probes, probes);
    atomic_fetch_add(&j->mismatches, bad);
}

/* Compares every placement of n pieces; returns the placements seen and
 * adds the probes to *probes and disagreements to the log. */
static uint64_t
compare_all(const solver *s, const egdb *db, int n, int both_sides, uint64_t *probes, mlog *log,
            int threads)
{
    uint64_t placements = 0;
    for (int bk = 0; bk <= n; bk++)
        for (int wk = 0; wk <= n - bk; wk++)
            for (int bm = 0; bm <= n - bk - wk; bm++) {
                cmp_job j;
                j.s = s;
                j.db = db;
                mat_make(s, bk, wk, bm, n - bk - wk - bm, &j.m);
                assert_non_null(s->vals[j.m.key]);
                j.both_sides = both_sides;
                atomic_init(&j.placements, 0);
                atomic_init(&j.probes, 0);
                atomic_init(&j.mismatches, 0);
                j.log = log;
                pfor_run(threads, (j.m.size + CHUNK - 1) / CHUNK, cmp_chunk, &j, 0);
                placements += atomic_load(&j.placements);
                *probes += atomic_load(&j.probes);
            }
    return placements;
}

/* ---- database helpers ------------------------------------------------------- */

static int
build_db(const char *dir, int npieces, int threads, egdb_progress_fn fn, void *arg,
         volatile int *stop, egdb_build_stats *st, char *err, size_t errlen)
{
    egdb_build_opts o;
    memset(&o, 0, sizeof o);
    o.npieces = npieces;
    o.threads = threads;
    o.progress = fn;
    o.progress_arg = arg;
    o.stop = stop;
    return egdb_build(dir, &o, st, err, errlen);
}

/* "<dir>/<name of slice>.wld" and the name. */
static void
slice_file(const char *dir, int nbk, int nwk, int nbm, int nwm, int rb, int rw, char *name,
           char *path, size_t pathlen)
{
    egix_slice sl = {(int8_t)nbk, (int8_t)nwk, (int8_t)nbm, (int8_t)nwm, (int8_t)rb, (int8_t)rw};
    assert_int_equal(egix_slice_name(&sl, name, EGIX_NAME_MAX), 0);
    snprintf(path, pathlen, "%s/%s.wld", dir, name);
}

/* ---- group setup: a fresh 4-piece build and the 1-4 piece solve -------------- */

static int
setup(void **state)
{
    static ctx c;
    memset(&c, 0, sizeof c);
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    c.threads = nproc < 1 ? 1 : nproc > MAX_THREADS ? MAX_THREADS : (int)nproc;
    if (!test_tmpdir(c.root, sizeof c.root, "test_egdb_build")) {
        fprintf(stderr, "mkdtemp %s: %s\n", c.root, strerror(errno));
        return -1;
    }
    snprintf(c.dir_a, sizeof c.dir_a, "%s/a", c.root);

    char err[1024];
    egdb_build_stats st;
    double t0 = now_sec();
    int rc = build_db(c.dir_a, 4, c.threads, NULL, NULL, NULL, &st, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "egdb_build 4 pieces: %s (%s)\n", err, egdb_strerror(rc));
        rm_rf(c.root);
        return -1;
    }
    printf("# egdb_build 1-4 pieces: %zu slices, %" PRIu64 " positions, %.1f s (%d threads)\n",
           st.slices_built, st.positions, now_sec() - t0, c.threads);
    c.nwld4 = st.slices_built;
    if ((rc = egdb_open(c.dir_a, 0, CACHE_BYTES, &c.db4, err, sizeof err)) != 0) {
        fprintf(stderr, "egdb_open: %s\n", err);
        rm_rf(c.root);
        return -1;
    }

    t0 = now_sec();
    solver_init(&c.sv, c.threads);
    solver_solve(&c.sv, 4);
    printf("# independent solve 1-4 pieces: %" PRIu64 " material pairs, %.1f s, value iteration "
           "up to %" PRIu64 " passes\n",
           c.sv.groups, now_sec() - t0, c.sv.vi_passes_max);
    solver_print_times(&c.sv);
    g_ctx = &c;
    *state = &c;
    return 0;
}

static int
teardown(void **state)
{
    ctx *c = g_ctx;
    (void)state;
    if (!c)
        return 0;
    egdb_close(c->db4);
    solver_free(&c->sv);
    rm_rf(c->root);
    return 0;
}

/* ---- tests --------------------------------------------------------------------- */

/* The solver itself: no impossible state, and value iteration and the
 * inverted-graph retrograde agree on every position of 1-4 pieces. */
static void
test_solver_self_check(void **state)
{
    ctx *c = g_ctx;
    (void)state;
    if (atomic_load(&c->sv.fail))
        printf("# solver failure: %s\n", c->sv.fail_msg);
    assert_int_equal(atomic_load(&c->sv.fail), 0);
    mlog_print(&c->sv.cross, "value iteration vs retrograde");
    assert_int_equal(c->sv.cross.n, 0);
    uint64_t total = 0;
    for (int n = 1; n <= 4; n++)
        total += published[n];
    /* Both algorithms saw exactly the placements, Black to move. */
    assert_int_equal(c->sv.cross_checked, total);
}

/* Every placement of 1-4 pieces, both sides to move, against the
 * database; the counts are the published ones. */
static void
test_exhaustive_1_to_4(void **state)
{
    ctx *c = g_ctx;
    mlog log;
    uint64_t probes_total = 0;
    (void)state;
    mlog_init(&log);
    double t0 = now_sec();
    for (int n = 1; n <= 4; n++) {
        uint64_t probes = 0;
        uint64_t placements = compare_all(&c->sv, c->db4, n, 1, &probes, &log, c->threads);
        printf("# %d pieces: %" PRIu64 " placements (published %" PRIu64 "), %" PRIu64
               " probes (both sides to move)\n",
               n, placements, published[n], probes);
        assert_int_equal(placements, published[n]);
        assert_int_equal(probes, 2 * published[n]);
        probes_total += probes;
    }
    printf("# 1-4 pieces: %" PRIu64 " positions compared in %.1f s\n", probes_total,
           now_sec() - t0);
    mlog_print(&log, "1-4 pieces, database vs independent");
    assert_int_equal(log.n, 0);
}

/* egdb_probe(p) == egdb_probe(eng_flip(p)), both sides to move, and both
 * equal to the independent value. */
static void
check_flip_samples(const ctx *c, const egdb *db, int nmin, int nmax, uint64_t samples,
                   uint64_t seed)
{
    uint64_t rng = seed, bad = 0, flip_bad = 0;
    mlog log;
    mlog_init(&log);
    for (uint64_t i = 0; i < samples; i++) {
        eng_pos p, f;
        int n = nmin + (int)(rng_next(&rng) % (uint64_t)(nmax - nmin + 1));
        random_placement(&c->sv, n, &rng, &p);
        p.stm = (rng_next(&rng) & 1) ? ENG_WHITE : ENG_BLACK;
        f = eng_flip(&p);
        int a = egdb_probe(db, &p), b = egdb_probe(db, &f);
        int mine = to_egdb(solver_value_any(&c->sv, &p));
        if (a != b) {
            flip_bad++;
            mlog_add(&log, "flipped twin", &p, b, a);
        }
        if (a != mine) {
            bad++;
            mlog_add(&log, "database", &p, a, mine);
        }
    }
    printf("# colour flip, %d-%d pieces: %" PRIu64 " samples (seed %#" PRIx64 ")\n", nmin, nmax,
           samples, seed);
    mlog_print(&log, "colour flip");
    assert_int_equal(flip_bad, 0);
    assert_int_equal(bad, 0);
}

static void
test_colour_flip(void **state)
{
    (void)state;
    check_flip_samples(g_ctx, g_ctx->db4, 1, 4, SAMPLES_FLIP, SEED);
}

/* Offset of the count of value v in a slice file's header (store.h). */
static size_t
count_at(int v)
{
    return v == EGDB_WIN ? 24 : v == EGDB_LOSS ? 32 : 40;
}

/* Rewrites the first position of value `from` of the slice file b (len
 * bytes, `positions` values) as `to`, with the counts, the payload hash
 * and the header hash made consistent again: only the values' logic can
 * find it. RETURN its index. */
static uint64_t
rewrite_first(uint8_t *b, size_t len, uint64_t positions, int from, int to)
{
    uint64_t found = UINT64_MAX;
    for (uint64_t i = 0; i < positions && found == UINT64_MAX; i++)
        if (((b[HEADER_BYTES + i / 4] >> (2 * (i % 4))) & 3) == (unsigned)from)
            found = i;
    assert_true(found != UINT64_MAX);
    uint8_t *byte = &b[HEADER_BYTES + found / 4];
    *byte = (uint8_t)((*byte & ~(3u << (2 * (found % 4)))) | ((unsigned)to << (2 * (found % 4))));
    put64(b + count_at(from), get64(b + count_at(from)) - 1);
    put64(b + count_at(to), get64(b + count_at(to)) + 1);
    put64(b + 48, XXH3_64bits(b + HEADER_BYTES, len - HEADER_BYTES));
    put64(b + 56, XXH3_64bits(b, 56));
    return found;
}

/* Writes orig (slice file `path` in dir, named name) with its first
 * `from` value rewritten as `to` (rewrite_first) through the buffer b,
 * and expects egdb_verify to name the slice (err: its message, 1024
 * bytes). RETURN the rewritten index. */
static uint64_t
verify_rewritten(const char *dir, const char *path, const char *name, uint8_t *b,
                 const uint8_t *orig, size_t len, uint64_t positions, int from, int to, char *err)
{
    memcpy(b, orig, len);
    uint64_t found = rewrite_first(b, len, positions, from, to);
    assert_int_equal(write_file(path, b, len), 0);
    int rc = egdb_verify(dir, g_ctx->threads, NULL, NULL, err, 1024);
    printf("# %s -> %s at index %" PRIu64 " of %s, checksums repaired: %s (%s)\n", value_word(from),
           value_word(to), found, name, err, egdb_strerror(rc));
    assert_int_equal(rc, EGDB_EVERIFY);
    assert_non_null(strstr(err, name));
    return found;
}

/* egdb_verify on the fresh build, then on three damaged copies. */
static void
test_verify_and_corruption(void **state)
{
    ctx *c = g_ctx;
    char err[1024], dir[400], name[EGIX_NAME_MAX], path[600];
    (void)state;
    double t0 = now_sec();
    int rc = egdb_verify(c->dir_a, c->threads, NULL, NULL, err, sizeof err);
    if (rc != 0)
        printf("# egdb_verify: %s\n", err);
    assert_int_equal(rc, 0);
    printf("# egdb_verify of the fresh 1-4 piece build: ok, %.1f s\n", now_sec() - t0);

    snprintf(dir, sizeof dir, "%s/corrupt", c->root);
    copy_wld(c->dir_a, dir);
    /* 1 black king, 1 white king, 1 black man, 1 white man, both leading
     * men on row 2: a self-twin slice. Its positions' predecessors inside
     * the 4-piece database lie in this slice or in slices the verifier
     * reaches later (lower ranks, more men), so a value wrong here is
     * first reported here. */
    slice_file(dir, 1, 1, 1, 1, 2, 2, name, path, sizeof path);
    size_t len;
    uint8_t *orig = read_file(path, &len);
    assert_non_null(orig);
    assert_true(len > HEADER_BYTES + 16);
    uint64_t positions = get64(orig + 16);
    assert_int_equal(len, HEADER_BYTES + (positions + 3) / 4);
    uint8_t *b = malloc(len);
    assert_non_null(b);

    /* (a) one payload byte flipped: the payload checksum fails. */
    memcpy(b, orig, len);
    b[HEADER_BYTES + (len - HEADER_BYTES) / 2] ^= 0x5A;
    assert_int_equal(write_file(path, b, len), 0);
    rc = egdb_verify(dir, c->threads, NULL, NULL, err, sizeof err);
    printf("# flipped payload byte: %s (%s)\n", err, egdb_strerror(rc));
    assert_int_equal(rc, EGDB_ECORRUPT);
    assert_non_null(strstr(err, path));

    /* (b) the first WIN of the slice rewritten as a LOSS, with the counts,
     * the payload hash and the header hash made consistent again: only
     * the values' logic can find it. A won position has a move to a lost
     * one, and its own successors are unchanged, so "loss" is wrong. */
    uint64_t found =
        verify_rewritten(dir, path, name, b, orig, len, positions, EGDB_WIN, EGDB_LOSS, err);
    /* When the verifier reports the changed position itself (its
     * predecessors in the slice could come first), its FEN must be a win
     * for the independent solver and the fresh build, and the damaged
     * copy, which still opens (its header checks pass), must answer loss. */
    char idx_text[64];
    snprintf(idx_text, sizeof idx_text, "index %" PRIu64 " (", found);
    const char *at = strstr(err, idx_text);
    if (at) {
        char fen[ENG_FEN_MAX], perr[256];
        const char *f0 = at + strlen(idx_text), *f1 = strchr(f0, ')');
        assert_non_null(f1);
        assert_true((size_t)(f1 - f0) < sizeof fen);
        memcpy(fen, f0, (size_t)(f1 - f0));
        fen[f1 - f0] = '\0';
        eng_pos p;
        egdb *bad = NULL;
        assert_int_equal(eng_parse_fen(fen, &p, perr, sizeof perr), 0);
        assert_non_null(strstr(err, "stored loss"));
        assert_int_equal(to_egdb(solver_value_any(&c->sv, &p)), EGDB_WIN);
        assert_int_equal(egdb_probe(c->db4, &p), EGDB_WIN);
        assert_int_equal(egdb_open(dir, 0, CACHE_BYTES, &bad, perr, sizeof perr), 0);
        assert_int_equal(egdb_probe(bad, &p), EGDB_LOSS);
        egdb_close(bad);
        printf("# the reported position %s: independent win, fresh build win, damaged copy "
               "loss\n",
               fen);
    }

    /* (c) the first DRAW rewritten as a WIN, checksums repaired: the
     * check reads a position stored as a win one move at a time, the
     * others from a block of prefetched successors (verify.c), so both
     * ways must find what they are given. */
    uint64_t drawn =
        verify_rewritten(dir, path, name, b, orig, len, positions, EGDB_DRAW, EGDB_WIN, err);
    /* The same through the block, as the check reads wins in big slices:
     * the same first bad index, and the undamaged build still passes. */
    egvf_set_wins_block_min(0);
    char err2[1024];
    assert_int_equal(
        verify_rewritten(dir, path, name, b, orig, len, positions, EGDB_DRAW, EGDB_WIN, err2),
        drawn);
    assert_string_equal(err, err2);
    rc = egdb_verify(c->dir_a, c->threads, NULL, NULL, err2, sizeof err2);
    egvf_set_wins_block_min((uint64_t)1 << 26);
    assert_int_equal(rc, 0);

    /* (d) the first WIN rewritten as 0 (unknown, which no built file
     * holds), the counts left and the checksums repaired: a probe of it
     * says damaged, never a value (a 0 passed on was the bound LL, an
     * exact loss, as a proof's leaf). */
    memcpy(b, orig, len);
    uint64_t zi = UINT64_MAX;
    for (uint64_t i = 0; i < positions && zi == UINT64_MAX; i++)
        if (((b[HEADER_BYTES + i / 4] >> (2 * (i % 4))) & 3) == EGDB_WIN)
            zi = i;
    assert_true(zi != UINT64_MAX);
    b[HEADER_BYTES + zi / 4] &= (uint8_t) ~(3u << (2 * (zi % 4)));
    put64(b + 48, XXH3_64bits(b + HEADER_BYTES, len - HEADER_BYTES));
    put64(b + 56, XXH3_64bits(b, 56));
    assert_int_equal(write_file(path, b, len), 0);
    {
        egix_slice zs = {1, 1, 1, 1, 2, 2};
        egix_table *zt = NULL;
        eng_pos zp;
        assert_int_equal(egix_table_create(&zs, &zt), 0);
        egix_unindex(zt, zi, &zp);
        egix_table_destroy(zt);
        egdb *zdb = NULL;
        char zerr[256];
        rc = egdb_open(dir, 0, CACHE_BYTES, &zdb, zerr, sizeof zerr);
        if (rc == 0) {
            int zv = egdb_probe(zdb, &zp);
            printf("# a stored 0 at index %" PRIu64 " of %s: probe %s\n", zi, name,
                   egdb_strerror(zv));
            assert_int_equal(zv, EGDB_ECORRUPT);
            assert_true(egdb_bound(zdb, egdb_scope(zdb), &zp, 0) < 0);
            egdb_close(zdb);
        } else {
            printf("# a stored 0: refused at open: %s\n", zerr);
            assert_int_equal(rc, EGDB_ECORRUPT);
        }
    }

    /* Restored, the copy verifies again. */
    assert_int_equal(write_file(path, orig, len), 0);
    rc = egdb_verify(dir, c->threads, NULL, NULL, err, sizeof err);
    assert_int_equal(rc, 0);
    free(b);
    free(orig);
    rm_rf(dir);
}

typedef struct stop_state {
    volatile int stop;
    size_t max_pair;
    size_t calls;
} stop_state;

static void
stop_progress(const egdb_progress *p, void *arg)
{
    stop_state *s = arg;
    s->calls++;
    if (p->pair_no > s->max_pair)
        s->max_pair = p->pair_no;
    /* Stop once about half the pairs are done. */
    if (p->pair_count >= 4 && 2 * p->pair_no >= p->pair_count)
        s->stop = 1;
}

/* Compares every .wld file of a with the one of the same name in b. */
static void
assert_same_files(const char *a, const char *b)
{
    size_t na, nb;
    char **va = list_wld(a, &na), **vb = list_wld(b, &nb);
    assert_int_equal(na, nb);
    size_t same = 0;
    for (size_t i = 0; i < na; i++) {
        assert_string_equal(va[i], vb[i]);
        char pa[600], pb[600];
        size_t la, lb;
        snprintf(pa, sizeof pa, "%s/%s", a, va[i]);
        snprintf(pb, sizeof pb, "%s/%s", b, vb[i]);
        uint8_t *x = read_file(pa, &la), *y = read_file(pb, &lb);
        assert_true(x && y);
        if (la != lb || memcmp(x, y, la) != 0)
            printf("# differs: %s\n", va[i]);
        else
            same++;
        free(x);
        free(y);
    }
    printf("# %zu of %zu slice files byte-identical\n", same, na);
    assert_int_equal(same, na);
    free_names(va, na);
    free_names(vb, nb);
}

/* A build stopped through opts.stop, then resumed, writes the same bytes
 * as an uninterrupted one; a build of a complete directory does nothing. */
static void
test_interrupt_resume(void **state)
{
    ctx *c = g_ctx;
    char err[1024], dir[400];
    egdb_build_stats st;
    stop_state ss;
    (void)state;
    snprintf(dir, sizeof dir, "%s/resume", c->root);
    memset(&ss, 0, sizeof ss);
    int rc = build_db(dir, 4, c->threads, stop_progress, &ss, &ss.stop, &st, err, sizeof err);
    size_t n_after_stop;
    char **names = list_wld(dir, &n_after_stop);
    free_names(names, n_after_stop);
    printf("# stopped build: %s (%s), %zu slices built, %zu files, %zu progress calls\n", err,
           egdb_strerror(rc), st.slices_built, n_after_stop, ss.calls);
    assert_int_equal(rc, EGDB_EINTERRUPT);
    assert_true(n_after_stop > 0);
    assert_true(n_after_stop < c->nwld4);
    assert_int_equal(st.slices_built, n_after_stop);

    rc = build_db(dir, 4, c->threads, NULL, NULL, NULL, &st, err, sizeof err);
    if (rc != 0)
        printf("# resumed build: %s\n", err);
    assert_int_equal(rc, 0);
    printf("# resumed: %zu slices built, %zu kept\n", st.slices_built, st.slices_kept);
    assert_int_equal(st.slices_kept, n_after_stop);
    assert_int_equal(st.slices_built + st.slices_kept, c->nwld4);
    assert_same_files(c->dir_a, dir);

    /* Nothing left to do. */
    rc = build_db(dir, 4, c->threads, NULL, NULL, NULL, &st, err, sizeof err);
    assert_int_equal(rc, 0);
    assert_int_equal(st.slices_built, 0);
    assert_int_equal(st.slices_kept, c->nwld4);
    assert_int_equal(st.positions, 0);
    assert_same_files(c->dir_a, dir);
    rm_rf(dir);
}

typedef struct midpair_state {
    volatile int stop;
    size_t stop_pair; /* the pair whose first phase asks to stop */
    int later_phases; /* reports of that pair after the stop */
} midpair_state;

static void
midpair_progress(const egdb_progress *p, void *arg)
{
    midpair_state *s = arg;
    if (s->stop) {
        if (p->pair_no == s->stop_pair)
            s->later_phases++;
        return;
    }
    if (p->pair_count >= 4 && p->pair_no == s->stop_pair && !strcmp(p->phase, "captures+lookups"))
        s->stop = 1;
}

/* A stop asked for inside a pair gives that pair up at once: none of its
 * later phases runs, nothing of it is written, and the resumed build
 * writes the same bytes. Before, the pair ran to its end (minutes at 8
 * pieces: Ctrl-C waited that long). */
static void
test_stop_within_pair(void **state)
{
    ctx *c = g_ctx;
    char err[1024], dir[400];
    egdb_build_stats st;
    midpair_state ms;
    (void)state;
    snprintf(dir, sizeof dir, "%s/midpair", c->root);
    memset(&ms, 0, sizeof ms);
    ms.stop_pair = 5;
    int rc = build_db(dir, 4, c->threads, midpair_progress, &ms, &ms.stop, &st, err, sizeof err);
    size_t n_after_stop;
    char **names = list_wld(dir, &n_after_stop);
    free_names(names, n_after_stop);
    printf("# stopped in pair %zu: %s (%s), %zu slices built, %d reports of it after\n",
           ms.stop_pair, err, egdb_strerror(rc), st.slices_built, ms.later_phases);
    assert_int_equal(rc, EGDB_EINTERRUPT);
    assert_int_equal(ms.later_phases, 0);
    assert_int_equal(st.slices_built, n_after_stop);
    assert_true(n_after_stop > 0);
    rc = build_db(dir, 4, c->threads, NULL, NULL, NULL, &st, err, sizeof err);
    assert_int_equal(rc, 0);
    assert_same_files(c->dir_a, dir);
    rm_rf(dir);
}

/* A truncated file makes egdb_open fail and name the file; probes beyond
 * the database are EGDB_ENOTFOUND. */
static void
test_open_errors(void **state)
{
    ctx *c = g_ctx;
    char err[1024], dir[400], name[EGIX_NAME_MAX], path[600];
    egdb *db = NULL;
    (void)state;
    snprintf(dir, sizeof dir, "%s/truncated", c->root);
    copy_wld(c->dir_a, dir);
    slice_file(dir, 1, 1, 1, 1, 2, 2, name, path, sizeof path);
    size_t len;
    uint8_t *orig = read_file(path, &len);
    assert_non_null(orig);
    /* Cut inside the payload, then inside the header. */
    const size_t cuts[] = {len - 1, HEADER_BYTES + 3, 10, 0};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        assert_int_equal(write_file(path, orig, cuts[k]), 0);
        err[0] = '\0';
        int rc = egdb_open(dir, 0, CACHE_BYTES, &db, err, sizeof err);
        printf("# %s cut to %zu bytes: %s (%s)\n", name, cuts[k], err, egdb_strerror(rc));
        assert_true(rc < 0);
        assert_true(rc == EGDB_ECORRUPT || rc == EGDB_EIO);
        assert_non_null(strstr(err, path));
    }
    assert_int_equal(write_file(path, orig, len), 0);
    int rc = egdb_open(dir, 0, CACHE_BYTES, &db, err, sizeof err);
    assert_int_equal(rc, 0);
    assert_int_equal(egdb_max_pieces(db), 4);
    egdb_close(db);
    /* Asking for 5 pieces from a 4-piece directory. */
    rc = egdb_open(dir, 5, CACHE_BYTES, &db, err, sizeof err);
    assert_int_equal(rc, EGDB_EMISSING);
    free(orig);
    rm_rf(dir);

    /* Positions with more pieces than the database. */
    eng_pos p;
    assert_int_equal(eng_parse_fen("B:W20,K30:B1,5,K9", &p, err, sizeof err), 0);
    assert_int_equal(egdb_probe(c->db4, &p), EGDB_ENOTFOUND);
    assert_int_equal(eng_parse_fen("W:W20,21,K30:B1,5,K9", &p, err, sizeof err), 0);
    assert_int_equal(egdb_probe(c->db4, &p), EGDB_ENOTFOUND);
    assert_int_equal(eng_parse_fen("W:W20,K30:B1,K9", &p, err, sizeof err), 0);
    assert_true(egdb_probe(c->db4, &p) > 0);
    assert_int_equal(egdb_max_pieces(c->db4), 4);
}

/*
 * A king's capture cycle that ends on its own starting square keeps the
 * king there. The builder and the verifier take successors from eng_make,
 * so a king lost here would make the 6-piece and larger databases wrong
 * (B:WK7,K8,K15,K16,K32:BK3 would lose for Black instead of reaching the
 * king-against-king W:WK32:BK3). Up to 5 pieces such a cycle captures the
 * whole opposing side, so the value does not change there and the
 * comparisons above cannot see it.
 */
static void
test_capture_cycle_successor(void **state)
{
    static const char *const cases[][3] = {
        {"B:WK7,K8,K15,K16,K32:BK3", "3x10x19x12x3", "W:WK32:BK3"},
        {"B:WK7,K8,K15,K16:BK3", "3x10x19x12x3", "W:W:BK3"},
        {"W:WK30:BK26,K25,K18,K17,K1", "30x23x14x21x30", "B:WK30:BK1"},
    };
    int wrong = 0;
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        eng_pos p, want, got;
        eng_move m;
        char err[512], fen[ENG_FEN_MAX];
        assert_int_equal(eng_parse_fen(cases[i][0], &p, err, sizeof err), 0);
        assert_int_equal(eng_parse_move(&p, cases[i][1], &m, err, sizeof err), 0);
        assert_int_equal(eng_parse_fen(cases[i][2], &want, err, sizeof err), 0);
        assert_int_equal(m.from, m.to);
        eng_make(&p, &m, &got);
        eng_format_fen(&got, fen, sizeof fen);
        if (!eng_equal(&got, &want)) {
            printf("# eng_make %s %s gives %s, expected %s\n", cases[i][0], cases[i][1], fen,
                   cases[i][2]);
            wrong++;
        }
    }
    assert_int_equal(wrong, 0);
}

/* 5 pieces: the builder extends the 1-4 piece directory, the solver
 * solves every 5-piece position, and both are compared everywhere (Black
 * to move) and on a seeded random sample with either side to move. */
static void
test_five_pieces(void **state)
{
    ctx *c = g_ctx;
    char err[1024], dir[400];
    egdb_build_stats st;
    egdb *db = NULL;
    (void)state;
    if (test_sanitized()) {
        printf("# 5 pieces skipped under CHECKERS_SANITIZED (1-4 pieces stay exhaustive)\n");
        skip();
    }
    snprintf(dir, sizeof dir, "%s/five", c->root);
    copy_wld(c->dir_a, dir);
    double t0 = now_sec();
    int rc = build_db(dir, 5, c->threads, NULL, NULL, NULL, &st, err, sizeof err);
    if (rc != 0)
        printf("# egdb_build 5: %s\n", err);
    assert_int_equal(rc, 0);
    printf("# egdb_build 5 pieces on top of 1-4: %zu slices built, %zu kept, %" PRIu64
           " positions, %.1f s\n",
           st.slices_built, st.slices_kept, st.positions, now_sec() - t0);
    assert_int_equal(st.slices_kept, c->nwld4);
    assert_int_equal(st.positions, published[5]);
    assert_int_equal(egdb_open(dir, 0, CACHE_BYTES, &db, err, sizeof err), 0);
    assert_int_equal(egdb_max_pieces(db), 5);

    t0 = now_sec();
    solver_solve(&c->sv, 5);
    printf("# independent solve of 5 pieces: %.1f s, %" PRIu64 " material pairs in all; "
           "value iteration up to %" PRIu64 " passes\n",
           now_sec() - t0, c->sv.groups, c->sv.vi_passes_max);
    solver_print_times(&c->sv);
    if (atomic_load(&c->sv.fail))
        printf("# solver failure: %s\n", c->sv.fail_msg);
    assert_int_equal(atomic_load(&c->sv.fail), 0);
    mlog_print(&c->sv.cross, "value iteration vs retrograde");
    assert_int_equal(c->sv.cross.n, 0);
    uint64_t total = 0;
    for (int n = 1; n <= 5; n++)
        total += published[n];
    assert_int_equal(c->sv.cross_checked, total);

    /* The seeded sample first (uniform placements, random side to move). */
    mlog log;
    mlog_init(&log);
    uint64_t rng = SEED ^ 5, bad = 0, sides[2] = {0, 0};
    for (uint64_t i = 0; i < SAMPLES_5; i++) {
        eng_pos p;
        random_placement(&c->sv, 5, &rng, &p);
        p.stm = (rng_next(&rng) & 1) ? ENG_WHITE : ENG_BLACK;
        sides[p.stm]++;
        int mine = to_egdb(solver_value_any(&c->sv, &p)), v = egdb_probe(db, &p);
        if (v != mine) {
            bad++;
            mlog_add(&log, "database", &p, v, mine);
        }
    }
    printf("# 5 pieces: %d random positions (%" PRIu64 " Black, %" PRIu64
           " White to move), seed %#" PRIx64 "\n",
           SAMPLES_5, sides[0], sides[1], SEED ^ 5);
    mlog_print(&log, "5-piece sample, database vs independent");
    assert_int_equal(bad, 0);

    /* Then every placement, Black to move. */
    t0 = now_sec();
    uint64_t probes = 0;
    uint64_t placements = compare_all(&c->sv, db, 5, 0, &probes, &log, c->threads);
    printf("# 5 pieces: %" PRIu64 " placements compared (published %" PRIu64 "), %.1f s\n",
           placements, published[5], now_sec() - t0);
    mlog_print(&log, "5 pieces, database vs independent");
    assert_int_equal(placements, published[5]);
    assert_int_equal(probes, published[5]);
    assert_int_equal(log.n, 0);

    check_flip_samples(c, db, 5, 5, SAMPLES_FLIP, SEED ^ 55);
    /* Beyond the database. */
    eng_pos p;
    assert_int_equal(eng_parse_fen("B:W20,21,K30:B1,5,K9", &p, err, sizeof err), 0);
    assert_int_equal(egdb_probe(db, &p), EGDB_ENOTFOUND);
    assert_int_equal(pieces_of(&p), 6);
    egdb_close(db);
    rm_rf(dir);
}

/*
 * The units of the pipeline (egdb/pipeline.h) for 1-8 pieces: egpl_units
 * accepts egix_slices' order (a unit's slices adjacent), the units' positions
 * add up to the published counts, and the dependency rule is the rules': for
 * every material, the material a crowning leads to lies in a unit listed
 * before it, which egpl_needs names, and no unit needs a later one. Splits
 * parse as documented.
 */
static void
test_pipeline_units(void **state)
{
    (void)state;
    char err[256];
    for (int n = 1; n <= 8; n++) {
        egix_slice *sl;
        size_t k, nu;
        egpl_unit *u;
        assert_int_equal(egix_slices_alloc(n, &sl, NULL, &k), 0);
        assert_int_equal(egpl_units(sl, k, &u, &nu, err, sizeof err), 0);
        uint64_t total = 0, want = 0;
        size_t covered = 0;
        for (size_t i = 0; i < nu; i++) {
            total += u[i].positions;
            covered += u[i].end - u[i].begin;
            assert_true(i == 0 || u[i].begin == u[i - 1].end);
            /* Every crowning of either colour, from either member. */
            for (int side = 0; side < 2; side++) {
                int bk = u[i].nbk, wk = u[i].nwk, bm = u[i].nbm, wm = u[i].nwm;
                if (side == 0 ? bm == 0 : wm == 0)
                    continue;
                if (side == 0)
                    bk++, bm--;
                else
                    wk++, wm--;
                egpl_unit target = {bk, wk, bm, wm, 0, 0, 0, 0, 0, 0, 0, 0};
                size_t found = nu;
                for (size_t v = 0; v < nu; v++) {
                    char name[EGPL_NAME_MAX];
                    egpl_unit_name(&target, name);
                    if (egpl_unit_is(&u[v], name))
                        found = v;
                }
                assert_true(found < i);
                assert_true(egpl_needs(&u[i], &u[found]));
                assert_int_equal(u[found].split, u[i].split);
            }
            for (size_t v = i; v < nu; v++)
                assert_false(egpl_needs(&u[i], &u[v]));
        }
        assert_int_equal(covered, k);
        assert_int_equal(egix_count(n, -1, -1, &want), 0);
        assert_int_equal(total, want);
        free(u);
        free(sl);
    }
    unsigned m;
    assert_int_equal(egpl_parse_splits("4v4,5v3", 8, &m, err, sizeof err), 0);
    assert_int_equal(m, (1u << 4) | (1u << 5));
    assert_int_equal(egpl_parse_splits("3v5", 8, &m, err, sizeof err), 0);
    assert_int_equal(m, 1u << 5);
    assert_int_equal(egpl_parse_splits("all", 8, &m, err, sizeof err), 0);
    assert_int_equal(m, 0x1f0u);
    assert_int_equal(egpl_parse_splits("4v3", 8, &m, err, sizeof err), EGDB_EINVAL);
    assert_int_equal(egpl_parse_splits("4v4;5v3", 8, &m, err, sizeof err), EGDB_EINVAL);
    assert_int_equal(egpl_parse_splits("", 8, &m, err, sizeof err), EGDB_EINVAL);
}

/* ---- pipelined builds of some splits (egdb/pipeline.h) --------------------------- */

/* Stops the build at the first progress report of a stage ("verify",
 * "compress") after `after` reports of any kind: a stop between a unit's
 * build and its mark. */
typedef struct stage_stop {
    volatile int stop;
    size_t calls, after;
} stage_stop;

static void
stop_in_stage(const egdb_progress *p, void *arg)
{
    stage_stop *s = arg;
    if (++s->calls > s->after && (!strcmp(p->phase, "verify") || !strcmp(p->phase, "compress")))
        s->stop = 1;
}

/* Every 5-piece .cwl of dir against the one of the same name in ref. */
static size_t
assert_same_cwl5(const char *dir, const char *ref)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    size_t n = 0;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len != 11 || strcmp(e->d_name + 7, ".cwl"))
            continue;
        int pieces = 0;
        for (int i = 0; i < 4; i++)
            pieces += egix_name_digit(e->d_name[i]);
        if (pieces != 5)
            continue;
        char pa[1200], pb[1200];
        size_t la, lb;
        snprintf(pa, sizeof pa, "%.600s/%.256s", dir, e->d_name);
        snprintf(pb, sizeof pb, "%.600s/%.256s", ref, e->d_name);
        uint8_t *x = read_file(pa, &la), *y = read_file(pb, &lb);
        assert_non_null(x);
        assert_non_null(y);
        assert_int_equal(la, lb);
        assert_memory_equal(x, y, la);
        free(x);
        free(y);
        n++;
    }
    closedir(d);
    return n;
}

/* Whether dir holds a 2-bit file of 5 pieces. */
static int
has_wld5(const char *dir)
{
    size_t n;
    char **v = list_wld(dir, &n);
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        int pieces = 0;
        for (int j = 0; j < 4; j++)
            pieces += egix_name_digit(v[i][j]);
        found |= pieces == 5;
    }
    free_names(v, n);
    return found;
}

/*
 * The 5-piece databases of one split built by the pipeline on top of the
 * 1-4 set: stopped twice (once inside a slice pair's run, once between a
 * unit's build and its mark) and resumed, the result is byte for byte the
 * compressed files of the ordinary 1-5 build (the suites' CHECKERS_TEST_DB),
 * no 5-piece 2-bit file is left, every unit is marked, the split's
 * positions probe to the ordinary build's values, and a position of
 * another split is not in the databases (never a value).
 */
static void
test_pipeline_split(void **state)
{
    ctx *c = g_ctx;
    char err[1024], dir[400];
    egdb_build_stats st;
    (void)state;
    const char *ref = test_db_dir();
    assert_non_null(ref);
    /* 4 against 1 (46.4 M positions); 5 against 0 under the sanitizers. */
    const int big = test_sanitized() ? 5 : 4;
    snprintf(dir, sizeof dir, "%s/pipe", c->root);
    copy_wld(c->dir_a, dir);
    egdb_build_opts o;
    memset(&o, 0, sizeof o);
    o.npieces = 5;
    o.threads = c->threads;
    o.pipeline = 1;
    o.splits = 1u << big;

    egdb_cost cost;
    assert_int_equal(egdb_estimate(dir, &o, &cost, err, sizeof err), 0);
    uint64_t want = 0;
    assert_int_equal(egix_count(5, big, 5 - big, &want), 0);
    assert_int_equal(cost.positions, want);
    assert_true(cost.disk_peak > 0 && cost.disk_peak <= cost.disk_end + want / 4 + 1);
    /* The 1-4 files were copied without their compressed form, which the
     * command's last step writes: the estimate counts that compression
     * (it counted none before stop 55), the 2-vs-2 positions among it. */
    uint64_t two_two = 0;
    assert_int_equal(egix_count(4, 2, 2, &two_two), 0);
    assert_true(two_two > 0 && cost.stage_positions_compress >= two_two);
    /* Without the pipeline the split's files are compressed at the end,
     * every 2-bit file still there: the peak and the end count both (the
     * compressed files were left out of them before stop 58). */
    o.pipeline = 0;
    egdb_cost kept;
    assert_int_equal(egdb_estimate(dir, &o, &kept, err, sizeof err), 0);
    assert_int_equal(kept.positions, want);
    assert_true(kept.stage_positions_compress >= want + two_two);
    assert_true(kept.disk_end >= want / 4 + want / 40);
    assert_true(kept.disk_peak >= kept.disk_end);
    o.pipeline = 1;

    stop_state ss;
    memset(&ss, 0, sizeof ss);
    o.progress = stop_progress;
    o.progress_arg = &ss;
    o.stop = &ss.stop;
    int rc = egdb_build(dir, &o, &st, err, sizeof err);
    printf("# pipeline %dv%d, first stop: %s (%s), %zu units staged, %zu dropped\n", big, 5 - big,
           err, egdb_strerror(rc), st.units_staged, st.units_dropped);
    assert_int_equal(rc, EGDB_EINTERRUPT);

    stage_stop s2;
    memset(&s2, 0, sizeof s2);
    s2.after = 3;
    o.progress = stop_in_stage;
    o.progress_arg = &s2;
    o.stop = &s2.stop;
    rc = egdb_build(dir, &o, &st, err, sizeof err);
    printf("# second stop: %s (%s)\n", err, egdb_strerror(rc));
    assert_true(rc == EGDB_EINTERRUPT || rc == 0);

    o.progress = NULL;
    o.progress_arg = NULL;
    o.stop = NULL;
    rc = egdb_build(dir, &o, &st, err, sizeof err);
    if (rc != 0)
        printf("# resumed: %s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(egdb_estimate(dir, &o, &cost, err, sizeof err), 0);
    assert_int_equal(cost.positions, 0);
    assert_int_equal(cost.units, 0);
    size_t ncwl = assert_same_cwl5(dir, ref);
    printf("# %zu compressed 5-piece files identical to the ordinary build's\n", ncwl);
    assert_true(ncwl > 0);
    assert_false(has_wld5(dir));

    egdb *db, *full;
    assert_int_equal(egdb_open(dir, 0, CACHE_BYTES, &db, err, sizeof err), 0);
    assert_int_equal(egdb_open(ref, 0, CACHE_BYTES, &full, err, sizeof err), 0);
    assert_int_equal(egdb_max_pieces(db), 4);
    uint64_t seed = 0x5eed5eedull, in = 0, out = 0;
    for (int t = 0; t < 20000; t++) {
        eng_pos p = test_random_pos(&seed, 5);
        if (big == 5 && t % 2) {
            /* test_random_pos gives both sides pieces: five of one
             * colour are made here, men that reached the far row
             * crowned. */
            uint32_t occ = p.bm | p.wm | p.bk | p.wk;
            p.bm = occ & ~(0xfu << 28) & (uint32_t)test_rnd(&seed);
            p.bk = occ & ~p.bm;
            p.wm = p.wk = 0;
        }
        int nb = __builtin_popcount(p.bm | p.bk), nw = 5 - nb;
        int mine = (nb > nw ? nb : nw) == big;
        assert_int_equal(egdb_covers(db, &p), mine);
        int v = egdb_probe(db, &p);
        if (mine) {
            assert_int_equal(v, egdb_probe(full, &p));
            in++;
        } else {
            assert_int_equal(v, EGDB_ENOTFOUND);
            out++;
        }
    }
    printf("# %" PRIu64 " positions of the split probed as the full build, %" PRIu64
           " of other splits not found\n",
           in, out);
    assert_true(in > 0 && out > 0);
    egdb_close(db);
    egdb_close(full);
    /* The whole directory still verifies (the 5-piece files against their
     * successors through the compressed files). */
    rc = egdb_verify(dir, c->threads, NULL, NULL, err, sizeof err);
    if (rc != 0)
        printf("# verify: %s\n", err);
    assert_int_equal(rc, 0);
    rm_rf(dir);
}

/* Whether dir holds name. */
static int
has_file(const char *dir, const char *name)
{
    char p[700];
    snprintf(p, sizeof p, "%.600s/%.64s", dir, name);
    return access(p, F_OK) == 0;
}

/*
 * A cluster task (o.unit) that finds its unit already staged deletes
 * nothing. Two tasks for one unit (a job array resubmitted while the first
 * ran) could both pass the estimate; the second then took the lock, found
 * the unit staged and, its selection holding no later unit, dropped the
 * unit's 2-bit files, which the tasks of the units promoting into it read:
 * they failed with "not built yet", and the unit was marked done. Here the
 * second task is a second egdb_build of the same unit.
 */
static void
test_unit_task_keeps_files(void **state)
{
    ctx *c = g_ctx;
    char err[1024], dir[400];
    egdb_build_stats st;
    (void)state;
    snprintf(dir, sizeof dir, "%s/task", c->root);
    copy_wld(c->dir_a, dir);
    egdb_build_opts o;
    memset(&o, 0, sizeof o);
    o.npieces = 5;
    o.threads = c->threads;
    o.pipeline = 1;
    o.unit = "4100";
    /* The task keeps its 2-bit files: they are there at the end too (the
     * estimate dropped them before stop 58). */
    egdb_cost cost;
    uint64_t unit_pos = 0;
    assert_int_equal(egdb_estimate(dir, &o, &cost, err, sizeof err), 0);
    assert_int_equal(egix_material_size(4, 1, 0, 0, &unit_pos), 0);
    assert_int_equal(cost.positions, 2 * unit_pos);
    assert_true(cost.disk_end >= 2 * unit_pos / 4 && cost.disk_peak >= cost.disk_end);
    int rc = egdb_build(dir, &o, &st, err, sizeof err);
    if (rc != 0)
        printf("# first task: %s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(st.units_staged, 1);
    assert_true(has_file(dir, "units/4100.done"));
    assert_true(has_file(dir, "4100.00.wld") && has_file(dir, "1400.00.wld"));
    rc = egdb_build(dir, &o, &st, err, sizeof err);
    if (rc != 0)
        printf("# second task: %s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(st.units_staged, 0);
    assert_int_equal(st.units_dropped, 0);
    assert_true(has_file(dir, "4100.00.wld") && has_file(dir, "1400.00.wld"));
    rm_rf(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_solver_self_check), cmocka_unit_test(test_exhaustive_1_to_4),
        cmocka_unit_test(test_colour_flip),       cmocka_unit_test(test_verify_and_corruption),
        cmocka_unit_test(test_interrupt_resume),  cmocka_unit_test(test_stop_within_pair),
        cmocka_unit_test(test_open_errors),       cmocka_unit_test(test_capture_cycle_successor),
        cmocka_unit_test(test_five_pieces),       cmocka_unit_test(test_pipeline_units),
        cmocka_unit_test(test_pipeline_split),    cmocka_unit_test(test_unit_task_keeps_files),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
