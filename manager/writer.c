/*
 * writer.c - the manager's result writer (writer.h is the manual: why a
 * thread, and who touches what while a result is on it).
 *
 * OWNS: the writer's thread, its mutex and condition, the pipe by which
 *   it wakes the loop, and the task while it is on the thread.
 * CALLS: the tree (tree.h: mt_result_in) and libevent (the pipe's event,
 *   on the loop's thread only). Nothing here calls back into manager.c
 *   except through the mw_done_fn it was given.
 *
 * THE HANDSHAKE (one mutex, one condition; st says whose turn it is)
 *   W_IDLE   no task.                              loop: mw_submit -> W_ADMIT
 *   W_ADMIT  the thread begins and admits.         thread: -> W_WANT, poke
 *   W_WANT   the thread waits for the loop.        loop: -> W_GRAPH, waits
 *   W_GRAPH  the thread changes the graph.         thread: -> W_COMMIT
 *   W_COMMIT the thread commits, the loop runs.    thread: -> W_DONE, poke
 *   W_DONE   the task is ready to hand back.       loop: -> W_IDLE, done()
 *   W_QUIT   the thread ends (mw_close).
 * A refused or failed admission goes from W_ADMIT to W_DONE (no fence).
 * Pokes may merge (the pipe is a doorbell, not a queue): the loop's
 * callback looks at st, not at how many bytes came.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "manager/writer.h"

enum { W_IDLE, W_ADMIT, W_WANT, W_GRAPH, W_COMMIT, W_DONE, W_QUIT };

struct mgr_writer {
    mt_tree *t;
    pthread_t th;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int st;        /* under mu */
    mw_task *task; /* the task on the thread (W_ADMIT .. W_DONE) */
    int pipe[2];   /* the thread writes a byte, the loop reads */
    struct event *ev;
    mw_done_fn done;
    void *arg;
    int busy;         /* the loop's view: submitted and not handed back (loop thread only) */
    const char *hold; /* CHECKERS_RESULT_HOLD's FIFO, or NULL */
};

static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The doorbell: a byte the loop's event sees. A full pipe already rings. */
static void
poke(mgr_writer *w)
{
    char b = 1;
    ssize_t r;
    do
        r = write(w->pipe[1], &b, 1);
    while (r < 0 && errno == EINTR);
}

static void
set_state(mgr_writer *w, int st)
{
    pthread_mutex_lock(&w->mu);
    w->st = st;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* The test hook (writer.h, mw_open): wait for one byte of the FIFO. */
static void
hold_for_test(const char *fifo)
{
    fprintf(stderr, "result writer: held before the graph step (CHECKERS_RESULT_HOLD=%s)\n", fifo);
    int fd = open(fifo, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char b;
    ssize_t r;
    do
        r = read(fd, &b, 1);
    while (r < 0 && errno == EINTR);
    close(fd);
}

/* mt_fence.enter, on the writer's thread: the loop is asked to park, and
 * the graph step waits until it has. */
static void
fence_enter(void *arg)
{
    mgr_writer *w = arg;
    if (w->hold)
        hold_for_test(w->hold);
    set_state(w, W_WANT); /* the broadcast wakes a loop blocked in mw_wait */
    poke(w);
    pthread_mutex_lock(&w->mu);
    while (w->st == W_WANT)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

/* mt_fence.leave, on the writer's thread: the loop goes on. */
static void
fence_leave(void *arg)
{
    set_state(arg, W_COMMIT);
}

static void *
writer_main(void *arg)
{
    mgr_writer *w = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* the loop's libevent handles them */
    mt_fence fence = {fence_enter, fence_leave, w};
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (w->st != W_ADMIT && w->st != W_QUIT)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->st == W_QUIT)
            break;
        mw_task *k = w->task;
        pthread_mutex_unlock(&w->mu);
        double t0 = now_s();
        k->err[0] = 0;
        k->rc =
            mt_result_in(w->t, &fence, k->id, k->bound, k->settled, k->score, k->depth, k->nodes,
                         k->ms, k->items.v, k->items.n, k->max_items, k->err, sizeof k->err);
        k->seconds = now_s() - t0;
        set_state(w, W_DONE);
        poke(w);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/*
 * The loop's side of the handshake, between two of its callbacks (or in
 * mw_wait): a graph step asked for is let run while this thread waits; a
 * finished task is handed back. block: wait until the task is handed back.
 */
static void
serve(mgr_writer *w, int block)
{
    pthread_mutex_lock(&w->mu);
    for (;;) {
        if (w->st == W_WANT) {
            double t0 = now_s();
            w->st = W_GRAPH;
            pthread_cond_broadcast(&w->cv);
            while (w->st == W_GRAPH) /* parked: the graph is the writer's */
                pthread_cond_wait(&w->cv, &w->mu);
            w->task->parked += now_s() - t0;
            continue;
        }
        if (w->st == W_DONE || !block || w->st == W_IDLE)
            break;
        pthread_cond_wait(&w->cv, &w->mu);
    }
    mw_task *k = NULL;
    if (w->st == W_DONE) {
        w->st = W_IDLE;
        k = w->task;
        w->task = NULL;
    }
    pthread_mutex_unlock(&w->mu);
    if (k) {
        w->busy = 0;
        w->done(w->arg, k); /* may submit the next */
    }
}

static void
on_pipe(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    char buf[64];
    while (read(fd, buf, sizeof buf) > 0) /* the doorbell's bytes; st says why */
        ;
    serve(arg, 0);
}

int
mw_open(mgr_writer **out, mt_tree *t, struct event_base *base, mw_done_fn done, void *arg,
        char *err, size_t errlen)
{
    *out = NULL;
    mgr_writer *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory for the result writer");
        return -1;
    }
    w->t = t;
    w->done = done;
    w->arg = arg;
    w->pipe[0] = w->pipe[1] = -1;
    const char *hold = getenv("CHECKERS_RESULT_HOLD");
    w->hold = hold && *hold ? hold : NULL;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if (pipe2(w->pipe, O_NONBLOCK | O_CLOEXEC)) {
        snprintf(err, errlen, "the result writer's pipe: %s", strerror(errno));
        mw_close(w);
        return -1;
    }
    w->ev = event_new(base, w->pipe[0], EV_READ | EV_PERSIST, on_pipe, w);
    if (!w->ev || event_add(w->ev, NULL)) {
        snprintf(err, errlen, "the result writer's event could not be made");
        mw_close(w);
        return -1;
    }
    int rc = pthread_create(&w->th, NULL, writer_main, w);
    if (rc) {
        snprintf(err, errlen, "the result writer's thread: %s", strerror(rc));
        mw_close(w);
        return -1;
    }
    w->started = 1;
    *out = w;
    return 0;
}

int
mw_busy(const mgr_writer *w)
{
    return w && w->busy;
}

void
mw_submit(mgr_writer *w, mw_task *task)
{
    w->busy = 1;
    pthread_mutex_lock(&w->mu);
    w->task = task;
    w->st = W_ADMIT;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void
mw_wait(mgr_writer *w)
{
    if (w && w->busy)
        serve(w, 1);
}

void
mw_close(mgr_writer *w)
{
    if (!w)
        return;
    mw_wait(w);
    if (w->started) {
        set_state(w, W_QUIT);
        pthread_join(w->th, NULL);
    }
    if (w->ev)
        event_free(w->ev);
    if (w->pipe[0] >= 0)
        close(w->pipe[0]);
    if (w->pipe[1] >= 0)
        close(w->pipe[1]);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
