/*
 * loop.c - the event loop with SIGPIPE blocked for its thread (loop.h
 * says why and how).
 *
 * OWNS: nothing (the caller's event base; the thread's signal mask only
 *   while the loop runs).
 * CALLS: libevent only. Called by manager.c, worker.c and
 *   cli/serve_cmds.c; it calls none of them.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <event2/event.h>

#include "manager/loop.h"

/* ---- functions ------------------------------------------------------ */

/* A set holding SIGPIPE alone. */
static void
pipe_set(sigset_t *s)
{
    sigemptyset(s);
    sigaddset(s, SIGPIPE);
}

int
mgr_loop_run(struct event_base *base)
{
    sigset_t pipe, old;
    pipe_set(&pipe);
    pthread_sigmask(SIG_BLOCK, &pipe, &old);
    int rc = event_base_dispatch(base);
    if (!sigismember(&old, SIGPIPE)) {
        /* Clear what the loop's failed writes left pending: unblocked,
         * it would be delivered at once, with its default action. A zero
         * timeout: sigtimedwait returns EAGAIN when nothing is pending. */
        const struct timespec zero = {0, 0};
        for (;;) {
            int sig = sigtimedwait(&pipe, NULL, &zero);
            if (sig == SIGPIPE || (sig < 0 && errno == EINTR))
                continue; /* taken (or interrupted): look again */
            break;        /* EAGAIN: nothing pending */
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    return rc;
}

void
mgr_loop_child(void)
{
    sigset_t pipe;
    pipe_set(&pipe);
    pthread_sigmask(SIG_UNBLOCK, &pipe, NULL);
}
