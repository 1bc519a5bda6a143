/*
 * writer.h - the manager's result writer: one thread that admits and
 * commits workers' results (tree.h, mt_result_in) off the event loop.
 * Not a public interface (manager.c's, like mgr_internal.h).
 *
 * WHY A THREAD (issue 42)
 *   A result is admitted, applied and committed in one write transaction
 *   (tree.h, mt_result). Admission walks every record of the proof with
 *   the checker's rules, about 100,000 records a second here: a proof of
 *   450,000 records held the event loop 4.7 s, and with it every other
 *   worker's heartbeat and every status page. On this thread the loop
 *   goes on answering while the walk runs.
 *
 * WHO TOUCHES WHAT, WHILE A RESULT IS ON THE THREAD
 *   - The writer's thread owns the state's write transaction (LMDB binds
 *     it to the thread that began it) from the result's begin to its
 *     commit.
 *   - The loop thread may read the tree (the status pages, a PROOF
 *     frame's bound, the counters) while admission runs, which itself
 *     only reads the graph. It must change nothing of the tree: no
 *     mt_pick, mt_release, mt_given, mt_sample, mt_add_seconds (manager.c
 *     defers them: dispatch waits, releases are queued, a RESULT frame is
 *     left unread in its connection until the writer is free). Those are
 *     writes the LMDB lock would make it wait for anyway.
 *   - The graph step (a few milliseconds: the node takes the result, its
 *     change set is written into the same transaction) runs on the writer's
 *     thread while the loop thread is parked in mgr_writer's callback: the
 *     writer asks (a byte on a pipe), the loop answers between two of its
 *     callbacks, so that it is never halfway through a read of the graph,
 *     and waits until the step is done (tree.h, mt_fence). No lock is
 *     taken by the readers.
 *   - The commit then runs on the writer's thread with the loop free; the
 *     writer says it is done (a byte on the pipe) and the loop hands the
 *     task back to its owner (mw_done_fn), which sends the ACK.
 *   One result is on the thread at a time: results are applied in the
 *   order they are taken, as before.
 *
 * The thread blocks every signal: the loop's libevent handles them.
 */
#ifndef MANAGER_WRITER_H
#define MANAGER_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "engine/value.h"
#include "manager/tree.h"
#include "prover/admit.h"

struct event_base;

/* One result for the writer: what mt_result_in takes, and what it said. */
typedef struct mw_task {
    /* in */
    uint64_t id;
    eng_bound bound;
    int settled, score, depth;
    uint64_t nodes;
    uint32_t ms;
    padm_items items; /* the proof's records: the task's own until it is handed back */
    size_t max_items;
    /* out */
    int rc;         /* mt_result's */
    char err[1024]; /* its message */
    double seconds; /* the writer's wall time on it */
    double parked;  /* of it, the loop's time parked for the graph step */
} mw_task;

typedef struct mgr_writer mgr_writer;

/* Called on the loop's thread when a task is handed back (the writer is
 * free again: the callback may submit the next). */
typedef void (*mw_done_fn)(void *arg, mw_task *task);

/*
 * mw_open - the writer for tree t, its pipe watched by base. done(arg,
 * task) is called on base's thread for each task finished.
 * CHECKERS_RESULT_HOLD=FIFO (the tests): before a result's graph step the
 * writer opens FIFO and waits for a byte, so that a test can ask the
 * pages while an admission is, by construction, still running.
 * RETURN 0, or -1 with err (no thread, no pipe).
 */
int mw_open(mgr_writer **out, mt_tree *t, struct event_base *base, mw_done_fn done, void *arg,
            char *err, size_t errlen);

/* Nonzero from mw_submit until its task is handed back. */
int mw_busy(const mgr_writer *w);

/* The task is the writer's until done hands it back. Requires !mw_busy. */
void mw_submit(mgr_writer *w, mw_task *task);

/* Blocks the loop's thread until the task on the writer (if any) is
 * handed back (done called), serving its graph step on the way: for the
 * run's end, before the tree is closed. */
void mw_wait(mgr_writer *w);

/* mw_wait, then the thread ended and everything freed. NULL is fine. */
void mw_close(mgr_writer *w);

#endif /* MANAGER_WRITER_H */
