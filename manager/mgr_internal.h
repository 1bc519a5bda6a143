/*
 * mgr_internal.h - the manager's run state (manager.c's): the
 * connections, the local workers, the run's counters. Not a public
 * interface: the status pages read what they need of it through
 * manager.h (mgr_live_get), and web/ may not include this header
 * (tests/deps_check.sh).
 */
#ifndef MANAGER_MGR_INTERNAL_H
#define MANAGER_MGR_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "egdb/egdb.h"
#include "manager/manager.h"
#include "manager/protocol.h"
#include "manager/tree.h"
#include "manager/writer.h"
#include "prover/admit.h"
#include "prover/store.h"

#define MGR_MAX_LOCAL 256
#define MGR_RATE_WINDOW 60.0   /* seconds over which jobs a minute are counted */
#define MGR_PRE_HELLO_MAX 4096 /* bytes a frame may hold before HELLO (HELLO: < 500) */
#define MGR_MAX_CONNS 4096     /* connections at once; more are refused (logged) */

#define MGR_START_FAILS 3  /* local workers ending before HELLO, in a row: the run stops */
#define MGR_LOCAL_LINE 400 /* bytes of a local worker's last line kept */

struct mgr;

/* A local worker: its process, and its stderr, which comes through a
 * pipe to the manager, who writes it to DIR/workers/<k>.log and keeps the
 * last line, so that a worker that cannot start (a full disk, where its
 * log cannot be written either) still says why (manager.c, LOCAL
 * WORKERS). */
typedef struct mgr_local {
    struct mgr *m;
    int k;
    pid_t pid;        /* 0: not running */
    int out;          /* the pipe's read end, or -1 */
    int log;          /* DIR/workers/<k>.log, or -1 */
    struct event *ev; /* reads out */
    int joined;       /* its HELLO was welcomed (since its last start) */
    size_t len;       /* bytes in line */
    char line[MGR_LOCAL_LINE];
    char last[MGR_LOCAL_LINE]; /* its last whole line that was not blank */
} mgr_local;

typedef struct mgr_conn {
    struct mgr *m;
    struct bufferevent *bev;
    struct mgr_conn *next;
    uint32_t id;
    int welcomed;
    char name[MGP_NAME_MAX + 1];
    char addr[80];
    double since, last_rx, last_tx;
    int has_job;
    mt_job job;
    double job_start;
    uint64_t proof_id; /* the job the collected PROOF records belong to */
    padm_items proof;
    size_t proof_max;     /* records that job may send (PROOF BOUND, manager.c); 0: not open */
    size_t proof_dropped; /* records of a job not open: counted, not kept */
    uint64_t jobs_done;
    int paused; /* a RESULT left unread while the writer was busy (manager.c, THE WRITER) */
} mgr_conn;

struct mgr {
    const mgr_opts *o;
    struct event_base *base;
    struct evconnlistener *listener;
    struct event *tick, *sigint, *sigterm, *sigchld;
    mt_tree *tree;
    pst_env *store;
    egdb *db;
    char token[MGP_TOKEN_MAX + 1];
    char token_path[900]; /* the file local workers read it from */
    int need_token;
    int port;
    mgr_conn *conns;
    int nconns;              /* open connections */
    int max_conns;           /* the cap (--max-connections, within the fd limit) */
    uint64_t refused_conns;  /* connections refused at the cap */
    double last_refusal_log; /* when the cap was last logged */
    uint32_t next_conn_id;
    double start, last_progress, last_sample, last_save;
    int tty, finished, exit_code;
    char stop_reason[1100];
    mgr_local *local; /* nlocal of them */
    int nlocal, respawns;
    int start_fails;     /* local workers ended before HELLO since one last joined */
    double done_at[256]; /* completion times of recent jobs (ring) */
    unsigned done_n;
    uint64_t results_run;  /* jobs answered in this run */
    uint64_t cancelled;    /* jobs cancelled as no longer needed (UNWANTED JOBS) */
    double handle_seconds; /* manager time spent handling results and picks */
    /* the result writer (writer.h) and what the loop keeps of its task */
    mgr_writer *writer;
    mw_task wtask;
    mgr_conn *wconn;              /* the task's connection (its RESULT is on the writer); NULL
                                     once it closed */
    char wname[MGP_NAME_MAX + 1]; /* its worker's name, for the log either way */
    size_t wtask_have;            /* records the result announced */
    size_t wtask_dropped;         /* of them, a job not open's: counted, not held */
    uint64_t wtask_admitted0;     /* mt_admitted when it was submitted */
    uint64_t *held;               /* jobs to release once the writer is free */
    size_t nheld, held_cap;
};

#endif /* MANAGER_MGR_INTERNAL_H */
