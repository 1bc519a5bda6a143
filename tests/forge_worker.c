/*
 * forge_worker.c - a hostile worker for tests/e2e_admission.sh: it speaks
 * the manager's protocol (manager/protocol.h) like `checkers worker`, but
 * answers its first job with a forged proof, then waits to be thrown out.
 *
 *   forge_worker HOST:PORT TOKEN_FILE DB_DIR MODE
 *
 * It proves the job honestly first (df-pn into a store of its own, the
 * records gathered by padm_collect, exactly as worker.c does), then
 * forges from that:
 *   losing-move    the job position's record turned into the opposite
 *                  claim (a loss claimed as a win with its first legal
 *                  move, anything else as a loss), the rest kept;
 *   missing-reply  the honest records less one below the job's position;
 *   cycle          a win claimed for the side to move by a strategy that
 *                  goes back to a position it has already met whenever it
 *                  can (all of the other side's replies covered), which
 *                  is no win: it never ends, or ends where it should not;
 *   stronger       the honest records with a stronger bound claimed in
 *                  the result than they prove (a loss claimed as a win
 *                  when they prove a loss);
 *   outside        the honest records and one more, a true record of a
 *                  position the proof never reaches;
 *   huge           more records than the manager takes (run it with
 *                  --max-proof-records 1000): 1,001 copies of one record;
 *   flood          the honest records repeated to $FORGE_FLOOD records
 *                  (default 4,194,304): more than admission can check in
 *                  the job's time;
 *   flood-stale    (honest) the answer, acknowledged; then the same job's
 *                  answer again with the records repeated to $FORGE_FLOOD:
 *                  a job no longer open, whose records the manager drops
 *                  unread (exit 0 when that is acknowledged too);
 *   truncated      a result announcing one more record than was sent;
 *   resend         (honest) the answer, the connection closed before the
 *                  ACK, then the same answer again on a new connection, as
 *                  a worker resends what was not acknowledged: exit 0 when
 *                  it is acknowledged;
 *   silent         (honest) heartbeats and no answer, until the manager's
 *                  lease on the job runs out (exit 0 after 120 s).
 * Exit status: 0 when the manager closed the connection after the forged
 * result (refused), 1 when it acknowledged it (the forgery was taken: a
 * failure), 2 for anything else (no connection, a rejected HELLO, a bad
 * usage).
 *
 *   forge_worker copy-store SRC DST SKIP
 *
 * damages a proof the other way: every record of store SRC but the
 * SKIP-th (in key order) is written into a new store DST.
 *
 *   forge_worker set-schema ENV_DIR TEXT
 *
 * writes TEXT as the schema of a tree (manager/tree.h, "meta"; ENV_DIR
 * is a state's <state>/state, or the <state>/tree of the old layout): a
 * state of an older version, made from a new one.
 *
 *   forge_worker set-meta ENV_DIR KEY TEXT
 *
 * writes TEXT (or, for "-", deletes the entry) as any meta entry of a
 * tree, as damage would: the tree's meta checksum is left as it was.
 *
 *   forge_worker old-layout STATE
 *
 * writes the state in folder STATE (one environment, <state>/state) back
 * as the two environments of the layout before issue 42 (<state>/tree,
 * <state>/proofs; tests/test_state_util.h), for the upgrade's tests.
 *
 *   forge_worker damage-record STORE_DIR N
 *
 * flips one bit in the value of the N-th record (key order) of a proof
 * store, through LMDB (the file stays whole, the record fails its
 * checksum), and prints its key in hex.
 *
 *   forge_worker cancel-manager PORT_FILE HARD_FEN EASY_FEN WORKER_LOG
 *
 * plays the manager for one real `checkers worker` (the other way round):
 * it listens on a loopback port (written to PORT_FILE), welcomes the
 * worker, gives it a job on HARD_FEN of 60 s, cancels it at once (CANCEL),
 * and waits for WORKER_LOG to say the job was cancelled. No RESULT may
 * come for that job (protocol.h, CANCEL: the worker sends nothing). Then
 * a job on EASY_FEN, whose RESULT must be the first to come. Prints how
 * long the cancelled job ran; exit 0, 1 when the worker answered the
 * cancelled job or did not stop it, 2 for anything else.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <lmdb.h>

#include "egdb/egdb.h"
#include "manager/manager.h"
#include "manager/protocol.h"
#include "prover/admit.h"
#include "prover/posmap.h"
#include "prover/prover.h"
#include "prover/store.h"
#include "tests/test_state_util.h"

static int fd = -1;

static int
send_msg(const mgp_msg *m)
{
    size_t cap = mgp_encoded_max(m->type, m->type == MGP_PROOF ? m->u.proof.count : 0);
    uint8_t *buf = malloc(cap);
    char err[256];
    long n = buf ? mgp_encode(m, buf, cap, err, sizeof err) : -1;
    if (n < 0) {
        fprintf(stderr, "forge_worker: cannot encode %s: %s\n", mgp_type_name(m->type), err);
        free(buf);
        return -1;
    }
    for (long off = 0; off < n;) {
        ssize_t k = write(fd, buf + off, (size_t)(n - off));
        if (k <= 0) {
            free(buf);
            return -1;
        }
        off += k;
    }
    free(buf);
    return 0;
}

/* Reads one frame into *buf (kept for PROOF pointers). RETURN 0, or -1
 * when the connection closed. */
static int
recv_msg(mgp_msg *m, uint8_t *buf, size_t cap)
{
    size_t have = 0;
    for (;;) {
        char err[256];
        long need = mgp_peek(buf, have, err, sizeof err);
        if (need == MGP_EAGAIN && have >= MGP_HDR) /* the payload is on its way */
            need = MGP_HDR + (long)(buf[0] | buf[1] << 8 | buf[2] << 16 | (uint32_t)buf[3] << 24);
        if (need > 0 && (size_t)need <= have) {
            if (mgp_decode(buf, (size_t)need, m, err, sizeof err)) {
                fprintf(stderr, "forge_worker: bad frame: %s\n", err);
                return -1;
            }
            return 0;
        }
        if (need < 0 && need != MGP_EAGAIN)
            return -1;
        if (have == cap)
            return -1;
        ssize_t k = read(fd, buf + have, need > 0 ? (size_t)need - have : MGP_HDR - have);
        if (k <= 0)
            return -1;
        have += (size_t)k;
    }
}

static int
connect_to(const char *spec)
{
    char host[256];
    snprintf(host, sizeof host, "%s", spec);
    char *colon = strrchr(host, ':');
    if (!colon)
        return -1;
    *colon = 0;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
    if (getaddrinfo(host, colon + 1, &hints, &ai))
        return -1;
    int s = socket(ai->ai_family, ai->ai_socktype, 0);
    if (s < 0 || connect(s, ai->ai_addr, ai->ai_addrlen)) {
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    return s;
}

/* ---- the cycle: a "win" that comes back to where it has been --------- */

/* The positions met (prover/posmap.h) and those still to forge (a stack). */
typedef struct forge_walk {
    pmap seen;
    eng_pos *stack;
    size_t nstack, cap;
    int dbmax; /* positions the databases hold are leaves, not forged */
} forge_walk;

/* Meets c: a position not met before, and not a database leaf, is to be
 * forged. */
static void
meet(forge_walk *f, const eng_pos *c)
{
    int added;
    if (__builtin_popcount(c->bm | c->wm | c->bk | c->wk) <= f->dbmax ||
        pmap_add(&f->seen, c, &added) < 0 || !added)
        return;
    if (pmap_room((void **)&f->stack, &f->cap, f->nstack, sizeof *f->stack))
        exit(2);
    f->stack[f->nstack++] = *c;
}

/* Records claiming that x wins from every position met: where x moves,
 * a move to a position already met if there is one, else the first;
 * where the other side moves, every reply. Positions the databases hold
 * are left as leaves. At most limit positions are met: past it the
 * forgery is left incomplete (refused all the same, for a missing
 * record, if its cycle has not been reached first). */
static void
forge_cycle(const eng_pos *root, int dbmax, size_t limit, padm_items *out)
{
    int x = root->stm;
    forge_walk f = {.dbmax = -1};
    meet(&f, root);
    f.dbmax = dbmax;
    while (f.nstack && f.seen.n < limit) {
        eng_pos p = f.stack[--f.nstack];
        eng_movelist ml;
        int n = eng_generate(&p, &ml, ENG_DUPS_MERGE);
        if (n <= 0)
            continue;
        pst_item it;
        memset(&it, 0, sizeof it);
        it.pos = p;
        it.rec.win.from = it.rec.draw.from = PST_NOMOVE;
        it.rec.bound = p.stm == x ? ENG_WW : ENG_LL;
        for (int k = 0; k < n; k++) {
            eng_pos c;
            eng_make(&p, &ml.m[k], &c);
            if (p.stm != x) {
                meet(&f, &c); /* every reply */
            } else if (pmap_find(&f.seen, &c) >= 0 || k == n - 1) {
                /* back to a position met, or else the first move */
                int pick = pmap_find(&f.seen, &c) >= 0 ? k : 0;
                it.rec.win = pst_move_of(&ml.m[pick]);
                eng_make(&p, &ml.m[pick], &c);
                meet(&f, &c);
                break;
            }
        }
        if (padm_push(out, &it))
            exit(2);
    }
    pmap_free(&f.seen);
    free(f.stack);
}

/* ---- the forged answer --------------------------------------------------- */

/* Records of a flood: $FORGE_FLOOD, or 4,194,304. */
static size_t
flood_count(void)
{
    const char *e = getenv("FORGE_FLOOD");
    long v = e ? atol(e) : 0;
    return v > 0 ? (size_t)v : (size_t)4 << 20;
}

static int
forge(const char *mode, const mgp_job *j, egdb *db, pst_env *st, padm_items *out, eng_bound *claim,
      uint32_t *announce)
{
    char err[512];
    prv_opts o = {.db = db,
                  .db_pieces = db ? egdb_max_pieces(db) : 0,
                  .store = st,
                  .question = NULL, /* the value */
                  .time_limit = 60,
                  .tt_bytes = (size_t)64 << 20};
    prv_result r;
    int rc = prv_solve(&j->pos, &o, &r, err, sizeof err);
    if (rc == 0 && r.bound != ENG_LW)
        rc = padm_collect(st, db, &j->pos, out, err, sizeof err);
    if (rc) {
        fprintf(stderr, "forge_worker: the honest proof failed: %s\n", err);
        return -1;
    }
    *claim = r.bound;
    long root = padm_index(out, &j->pos);
    eng_movelist ml;
    eng_generate(&j->pos, &ml, ENG_DUPS_MERGE);
    if (!strcmp(mode, "losing-move") || (!strcmp(mode, "missing-reply") && out->n < 2)) {
        pst_item f = {j->pos, {ENG_LL, {PST_NOMOVE, 0, 0}, {PST_NOMOVE, 0, 0}, 0, 0}};
        if (eng_bound_hi(r.bound) < ENG_WIN) { /* not a win: claim one */
            f.rec.bound = ENG_WW;
            f.rec.win = pst_move_of(&ml.m[0]);
        }
        if (root >= 0)
            out->v[root] = f;
        else
            padm_push(out, &f);
        *claim = f.rec.bound;
    } else if (!strcmp(mode, "missing-reply")) {
        size_t drop = root == 0 ? 1 : 0;
        out->v[drop] = out->v[--out->n];
    } else if (!strcmp(mode, "cycle")) {
        out->n = 0;
        forge_cycle(&j->pos, o.db_pieces, 20000, out);
        *claim = ENG_WW;
    } else if (!strcmp(mode, "stronger")) {
        *claim = eng_bound_hi(r.bound) == ENG_LOSS ? ENG_WW : ENG_LL;
    } else if (!strcmp(mode, "outside")) {
        /* the single-corner shuttle (tests/test_prover_admit.c): a true
         * "Black at least draws" record, of a position no job reaches */
        eng_pos p;
        eng_move m;
        if (eng_parse_fen("B:WK4:B3,11,12,15,16,K29", &p, err, sizeof err) ||
            eng_parse_move(&p, "29-25", &m, err, sizeof err))
            return -1;
        pst_item f = {p, {ENG_DW, {PST_NOMOVE, 0, 0}, pst_move_of(&m), 0, 0}};
        padm_push(out, &f);
    } else if (!strcmp(mode, "huge")) {
        pst_item one = out->v[0];
        out->n = 0;
        for (int k = 0; k < 1001; k++)
            padm_push(out, &one);
    } else if (!strcmp(mode, "flood")) {
        /* the honest records, again and again, to $FORGE_FLOOD records
         * (default 4,194,304, the manager's old cap) */
        size_t want = flood_count(), honest = out->n;
        for (size_t k = honest; honest && k < want; k++) {
            pst_item it = out->v[k % honest]; /* out->v may move */
            padm_push(out, &it);
        }
    } else if (!strcmp(mode, "truncated")) {
        *announce = 1;
    } else if (!strcmp(mode, "resend") || !strcmp(mode, "silent") || !strcmp(mode, "flood-stale")) {
        /* the honest answer */
    } else {
        fprintf(stderr, "forge_worker: unknown mode '%s'\n", mode);
        return -1;
    }
    return 0;
}

typedef struct copy_arg {
    padm_items items;
    long skip, at;
} copy_arg;

static int
copy_one(const eng_pos *p, const pst_record *r, void *arg)
{
    copy_arg *a = arg;
    if (a->at++ == a->skip)
        return 0;
    pst_item it = {*p, *r};
    return padm_push(&a->items, &it);
}

static int
copy_store(const char *src, const char *dst, long skip)
{
    pst_env *a, *b;
    char err[512], owner[PST_OWNER_MAX];
    uint64_t n;
    copy_arg ca = {{0}, skip, 0};
    /* the owner label too: the copy is that proof's store, less a record */
    if (pst_open(src, PST_RDONLY, &a, err, sizeof err) || pst_open(dst, 0, &b, err, sizeof err) ||
        pst_owner(a, owner, sizeof owner, &n, err, sizeof err) ||
        (owner[0] && pst_owner_set(b, owner, err, sizeof err)) ||
        pst_foreach(a, copy_one, &ca, err, sizeof err) ||
        pst_put_many(b, ca.items.v, ca.items.n, err, sizeof err)) {
        fprintf(stderr, "forge_worker copy-store: %s\n", err);
        return 2;
    }
    fprintf(stderr, "forge_worker copy-store: %zu of %ld records copied\n", ca.items.n, ca.at);
    padm_items_free(&ca.items);
    pst_close(a);
    pst_close(b);
    return 0;
}

/* Writes text as the meta entry key of the tree in dir, behind the
 * tree's back (its meta checksum is not updated); text NULL deletes it. */
static int
set_meta(const char *dir, const char *key, const char *text)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi meta;
    MDB_val k = {strlen(key), (void *)key}, v = {text ? strlen(text) : 0, (void *)text};
    int rc = mdb_env_create(&env);
    if (!rc)
        rc = mdb_env_set_maxdbs(env, 8);
    if (!rc)
        rc = mdb_env_set_mapsize(env, (size_t)1 << 36);
    if (!rc)
        rc = mdb_env_open(env, dir, 0, 0644);
    if (!rc)
        rc = mdb_txn_begin(env, NULL, 0, &txn);
    if (!rc)
        rc = mdb_dbi_open(txn, MT_DB_META, 0, &meta);
    if (rc == MDB_NOTFOUND) /* the old layout's <state>/tree */
        rc = mdb_dbi_open(txn, "meta", 0, &meta);
    if (!rc)
        rc = text ? mdb_put(txn, meta, &k, &v, 0) : mdb_del(txn, meta, &k, NULL);
    if (!rc)
        rc = mdb_txn_commit(txn);
    mdb_env_close(env);
    if (rc)
        fprintf(stderr, "forge_worker set-meta %s: %s\n", key, mdb_strerror(rc));
    return rc ? 2 : 0;
}

static int
set_schema(const char *dir, const char *text)
{
    return set_meta(dir, "schema", text);
}

/* Flips one bit in the value of the n-th record (key order) of the store
 * in dir, with LMDB itself: the file stays whole, the record fails its
 * checksum. Prints the record's key in hex. */
static int
damage_record(const char *dir, long n)
{
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi nodes;
    MDB_cursor *cur;
    MDB_val k, v;
    int rc = mdb_env_create(&env);
    if (!rc)
        rc = mdb_env_set_maxdbs(env, 4);
    if (!rc)
        rc = mdb_env_set_maxreaders(env, 1022);
    if (!rc)
        rc = mdb_env_set_mapsize(env, (size_t)1 << 36);
    if (!rc)
        rc = mdb_env_open(env, dir, 0, 0664);
    if (!rc)
        rc = mdb_txn_begin(env, NULL, 0, &txn);
    if (!rc)
        rc = mdb_dbi_open(txn, "nodes", 0, &nodes);
    if (!rc)
        rc = mdb_cursor_open(txn, nodes, &cur);
    for (long i = 0; !rc && i <= n; i++)
        rc = mdb_cursor_get(cur, &k, &v, i ? MDB_NEXT : MDB_FIRST);
    if (!rc) {
        uint8_t val[64];
        size_t len = v.mv_size < sizeof val ? v.mv_size : sizeof val;
        memcpy(val, v.mv_data, len);
        val[len / 2] ^= 0x10;
        MDB_val nv = {len, val};
        for (size_t i = 0; i < k.mv_size; i++)
            printf("%02x", ((const uint8_t *)k.mv_data)[i]);
        printf("\n");
        rc = mdb_cursor_put(cur, &k, &nv, MDB_CURRENT);
    }
    if (!rc)
        rc = mdb_txn_commit(txn);
    mdb_env_close(env);
    if (rc)
        fprintf(stderr, "forge_worker damage-record %ld: %s\n", n, mdb_strerror(rc));
    return rc ? 2 : 0;
}

/* The records, in PROOF frames, then the result. */
static void
send_answer(const mgp_job *job, const padm_items *items, eng_bound claim, uint32_t announce)
{
    for (size_t off = 0; off < items->n;) {
        uint32_t k =
            items->n - off > MGP_PROOF_CHUNK ? MGP_PROOF_CHUNK : (uint32_t)(items->n - off);
        uint8_t *recs = malloc((size_t)k * MGP_PROOF_REC);
        for (uint32_t i = 0; i < k; i++)
            mgp_proof_record(&items->v[off + i], recs + (size_t)i * MGP_PROOF_REC);
        mgp_msg p = {.type = MGP_PROOF};
        p.u.proof.id = job->id;
        p.u.proof.count = k;
        p.u.proof.records = recs;
        int bad = send_msg(&p);
        free(recs);
        if (bad)
            break; /* the manager may close before the last frame */
        off += k;
    }
    mgp_msg res = {.type = MGP_RESULT};
    res.u.result.id = job->id;
    res.u.result.bound = (uint8_t)claim;
    res.u.result.status = MGP_DONE;
    res.u.result.records = (uint32_t)items->n + announce;
    send_msg(&res);
}

/* HELLO, then WELCOME. RETURN 0 or -1. */
static int
hello(const char *token, const char *mode, mgp_msg *m, uint8_t *buf, size_t cap)
{
    mgp_msg h = {.type = MGP_HELLO};
    h.u.hello.magic = MGP_MAGIC;
    h.u.hello.version = MGP_VERSION;
    h.u.hello.db_pieces = 5;
    h.u.hello.pid = (uint32_t)getpid();
    snprintf(h.u.hello.token, sizeof h.u.hello.token, "%s", token);
    snprintf(h.u.hello.name, sizeof h.u.hello.name, "forger-%s", mode);
    if (send_msg(&h) || recv_msg(m, buf, cap) || m->type != MGP_WELCOME) {
        fprintf(stderr, "forge_worker: not welcomed\n");
        return -1;
    }
    return 0;
}

static double
now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Whether file holds text. */
static int
file_has(const char *file, const char *text)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return 0;
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, text) != NULL;
    fclose(f);
    return found;
}

static int
job_msg(uint64_t id, const char *fen, uint32_t ms)
{
    mgp_msg j = {.type = MGP_JOB};
    char err[160];
    if (eng_parse_fen(fen, &j.u.job.pos, err, sizeof err)) {
        fprintf(stderr, "forge_worker: %s: %s\n", fen, err);
        return -1;
    }
    j.u.job.id = id;
    j.u.job.q = (eng_question){j.u.job.pos.stm, ENG_WIN};
    j.u.job.time_ms = ms;
    return send_msg(&j);
}

/* cancel-manager (the header): the worker's side of CANCEL. */
static int
cancel_manager(const char *port_file, const char *hard, const char *easy, const char *log)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    FILE *pf;
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 1) ||
        getsockname(ls, (struct sockaddr *)&a, &al) || !(pf = fopen(port_file, "w"))) {
        fprintf(stderr, "forge_worker: cannot listen: %s\n", strerror(errno));
        return 2;
    }
    fprintf(pf, "%d\n", ntohs(a.sin_port));
    fclose(pf);
    struct pollfd lp = {ls, POLLIN, 0};
    if (poll(&lp, 1, 60000) != 1 || (fd = accept(ls, NULL, NULL)) < 0) {
        fprintf(stderr, "forge_worker: no worker came within 60 s\n");
        return 2;
    }
    static uint8_t buf[MGP_FRAME_MAX + MGP_HDR];
    mgp_msg m;
    if (recv_msg(&m, buf, sizeof buf) || m.type != MGP_HELLO) {
        fprintf(stderr, "forge_worker: no HELLO\n");
        return 2;
    }
    mgp_msg w = {.type = MGP_WELCOME};
    w.u.welcome = (mgp_welcome){MGP_VERSION, 1, 1000, 120000, m.u.hello.db_pieces};
    if (send_msg(&w) || job_msg(1, hard, 60000))
        return 2;
    mgp_msg c = {.type = MGP_CANCEL};
    c.u.id = 1;
    double t0 = now_s();
    if (send_msg(&c))
        return 2;
    /* until the worker says it stopped: any RESULT now is for job 1 */
    while (!file_has(log, "job 1: cancelled by the manager")) {
        if (now_s() - t0 > 50) {
            fprintf(stderr, "forge_worker: job 1 not stopped 50 s after CANCEL\n");
            return 1;
        }
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 50) == 1) {
            if (recv_msg(&m, buf, sizeof buf))
                return 2;
            if (m.type == MGP_RESULT || m.type == MGP_PROOF) {
                fprintf(stderr, "forge_worker: the worker answered the cancelled job 1\n");
                return 1;
            }
        }
    }
    fprintf(stderr, "forge_worker: job 1 (a 60 s job) stopped %.2f s after CANCEL\n", now_s() - t0);
    if (job_msg(2, easy, 20000))
        return 2;
    for (;;) {
        if (recv_msg(&m, buf, sizeof buf))
            return 2;
        if (m.type == MGP_RESULT) {
            uint64_t id = m.u.result.id;
            fprintf(stderr, "forge_worker: the first RESULT is for job %llu (%s)\n",
                    (unsigned long long)id, eng_bound_name((eng_bound)m.u.result.bound));
            return id == 2 ? 0 : 1;
        }
    }
}

int
main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN); /* a manager that closes mid-flood: EPIPE, not death */
    char err0[512];
    if (argc == 6 && !strcmp(argv[1], "cancel-manager"))
        return cancel_manager(argv[2], argv[3], argv[4], argv[5]);
    if (argc == 4 && !strcmp(argv[1], "set-schema"))
        return set_schema(argv[2], argv[3]);
    if (argc == 5 && !strcmp(argv[1], "set-meta"))
        return set_meta(argv[2], argv[3], strcmp(argv[4], "-") ? argv[4] : NULL);
    if (argc == 4 && !strcmp(argv[1], "damage-record"))
        return damage_record(argv[2], atol(argv[3]));
    if (argc == 5 && !strcmp(argv[1], "copy-store"))
        return copy_store(argv[2], argv[3], atol(argv[4]));
    if (argc == 3 && !strcmp(argv[1], "old-layout")) {
        if (test_state_split(argv[2], err0, sizeof err0) == 0)
            return 0;
        fprintf(stderr, "forge_worker old-layout: %s\n", err0);
        return 2;
    }
    if (argc != 5) {
        fprintf(stderr, "usage: forge_worker HOST:PORT TOKEN_FILE DB_DIR MODE\n");
        return 2;
    }
    char token[MGP_TOKEN_MAX + 1], err[512];
    if (mgr_read_token(argv[2], token, sizeof token, err, sizeof err)) {
        fprintf(stderr, "forge_worker: %s\n", err);
        return 2;
    }
    if ((fd = connect_to(argv[1])) < 0) {
        fprintf(stderr, "forge_worker: cannot connect to %s\n", argv[1]);
        return 2;
    }
    mgp_msg m;
    static uint8_t buf[MGP_FRAME_MAX + MGP_HDR];
    if (hello(token, argv[4], &m, buf, sizeof buf))
        return 2;
    egdb *db = NULL;
    if (m.u.welcome.db_pieces &&
        egdb_open(argv[3], m.u.welcome.db_pieces, (size_t)64 << 20, &db, err, sizeof err)) {
        fprintf(stderr, "forge_worker: %s\n", err);
        return 2;
    }
    char path[600];
    const char *tmpdir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/forge_worker.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    pst_env *st;
    if (!mkdtemp(path) || pst_open(path, 0, &st, err, sizeof err)) {
        fprintf(stderr, "forge_worker: no store: %s\n", err);
        return 2;
    }
    do {
        if (recv_msg(&m, buf, sizeof buf))
            return 2;
    } while (m.type != MGP_JOB);
    mgp_job job = m.u.job;
    padm_items items = {0};
    eng_bound claim;
    uint32_t announce = 0;
    if (forge(argv[4], &job, db, st, &items, &claim, &announce))
        return 2;
    if (!strcmp(argv[4], "silent")) {
        /* alive (heartbeats) but never answering: the lease must expire,
         * and the manager then cancels the job (CANCEL, its id) */
        for (int k = 0; k < 120; k++) {
            struct pollfd pf = {fd, POLLIN, 0};
            if (poll(&pf, 1, 1000) > 0 && recv_msg(&m, buf, sizeof buf))
                return 2;
            if (m.type == MGP_CANCEL) {
                fprintf(stderr, "forge_worker: CANCEL for job %llu (its job: %llu)\n",
                        (unsigned long long)m.u.id, (unsigned long long)job.id);
                return m.u.id == job.id ? 0 : 1;
            }
            mgp_msg hb = {.type = MGP_HEARTBEAT};
            if (send_msg(&hb))
                return 2;
        }
        return 0;
    }
    send_answer(&job, &items, claim, announce);
    fprintf(stderr, "forge_worker: job %llu, mode %s: %zu records sent, claim %s\n",
            (unsigned long long)job.id, argv[4], items.n, eng_bound_name(claim));
    if (!strcmp(argv[4], "resend")) {
        /* gone before the ACK, back, and the same answer again (worker.c
         * resends what was not acknowledged): it must be acknowledged,
         * and counted once */
        close(fd);
        if ((fd = connect_to(argv[1])) < 0 || hello(token, argv[4], &m, buf, sizeof buf))
            return 2;
        send_answer(&job, &items, claim, 0);
    }
    int code = 0;
    for (int acks = 0;;) {
        if (recv_msg(&m, buf, sizeof buf))
            break; /* closed: refused */
        if (m.type == MGP_ACK && m.u.id == job.id) {
            code = 1;
            if (strcmp(argv[4], "flood-stale") || acks++)
                break;
            /* answered and acknowledged: now a flood for the same job,
             * which is no longer open (its records must be dropped
             * unread, and not held) */
            size_t honest = items.n, want = flood_count();
            for (size_t k = honest; honest && k < want; k++) {
                pst_item it = items.v[k % honest]; /* items.v may move */
                padm_push(&items, &it);
            }
            send_answer(&job, &items, claim, 0);
            fprintf(stderr, "forge_worker: job %llu again: %zu records sent\n",
                    (unsigned long long)job.id, items.n);
        }
    }
    if (!strcmp(argv[4], "resend") || !strcmp(argv[4], "flood-stale"))
        code = code == 1 ? 0 : 1; /* an honest answer: acknowledged is right */
    padm_items_free(&items);
    pst_close(st);
    egdb_close(db);
    char f[700];
    snprintf(f, sizeof f, "%s/data.mdb", path); /* the store's two files */
    unlink(f);
    snprintf(f, sizeof f, "%s/lock.mdb", path);
    unlink(f);
    rmdir(path);
    close(fd);
    return code;
}
