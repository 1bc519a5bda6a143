/*
 * test_manager_loop.c - SIGPIPE without a process-wide SIG_IGN
 * (manager/loop.h, issue 42).
 *
 * THE SCENE
 *   A bufferevent holds 4 MiB to write to a stream socket; its peer reads
 *   the first bytes and closes its end, mid-write. The next writev() of
 *   the bufferevent then fails with EPIPE and raises SIGPIPE. The peer is
 *   the other end of an AF_UNIX socketpair, whose writer meets EPIPE and
 *   SIGPIPE on the first write after the close, every time (over TCP the
 *   first write after a reset fails with ECONNRESET and only a later one
 *   raises the signal, which would make the scene depend on timing).
 *   Each scene runs in a child process with SIGPIPE at its default
 *   action, as a program that ignores nothing has it.
 *
 * WHAT IS CHECKED
 *   - control: run by event_base_dispatch alone (what mgr_run and wrk_run
 *     did, less their global SIG_IGN), the child dies of SIGPIPE: the
 *     scene is real, and removing the global ignore alone would fail;
 *   - run by mgr_loop_run (what mgr_run, wrk_run and `checkers serve` use
 *     now), the child survives: the bufferevent reports the write error
 *     (EPIPE) on that one connection, no SIGPIPE is left pending, the
 *     thread's mask is as before and SIGPIPE's disposition untouched;
 *   - a thread that had SIGPIPE blocked before keeps it blocked, and its
 *     pending SIGPIPE is left to it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "manager/loop.h"

/* ---- the scene ------------------------------------------------------- */

#define SCENE_BYTES (4u << 20)

typedef struct scene {
    struct event_base *base;
    struct bufferevent *bev;
    struct event *peer_ev;
    int peer;   /* the peer's end, -1 once closed */
    int error;  /* errno of the bufferevent's error event, 0: none */
    size_t got; /* bytes the peer read before closing */
} scene;

/* The peer: reads what is there (the first bytes), then closes. */
static void
on_peer(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    scene *s = arg;
    char buf[65536];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0)
        s->got += (size_t)n;
    event_del(s->peer_ev);
    close(s->peer);
    s->peer = -1;
}

static void
on_bev_event(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    scene *s = arg;
    if (what & BEV_EVENT_ERROR)
        s->error = errno ? errno : -1;
    event_base_loopexit(s->base, NULL);
}

/* Sets the scene up; run(base) runs it. RETURN the bufferevent's errno
 * (EPIPE expected), or 100+ for a set-up failure. */
static int
scene_run(int (*run)(struct event_base *))
{
    scene s;
    memset(&s, 0, sizeof s);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        return 101;
    evutil_make_socket_nonblocking(sv[0]);
    s.peer = sv[1];
    s.base = event_base_new();
    s.bev = bufferevent_socket_new(s.base, sv[0], BEV_OPT_CLOSE_ON_FREE);
    s.peer_ev = event_new(s.base, sv[1], EV_READ | EV_PERSIST, on_peer, &s);
    if (!s.base || !s.bev || !s.peer_ev)
        return 102;
    bufferevent_setcb(s.bev, NULL, NULL, on_bev_event, &s);
    char *data = calloc(1, SCENE_BYTES);
    if (!data || bufferevent_write(s.bev, data, SCENE_BYTES))
        return 103;
    free(data);
    bufferevent_enable(s.bev, EV_WRITE);
    event_add(s.peer_ev, NULL);
    run(s.base);
    if (s.got == 0 || s.got >= SCENE_BYTES)
        return 104; /* the peer did not close mid-write */
    int e = s.error;
    event_free(s.peer_ev);
    bufferevent_free(s.bev);
    event_base_free(s.base);
    return e;
}

/* What the loops did before issue 42, less the global SIG_IGN. */
static int
plain_dispatch(struct event_base *base)
{
    return event_base_dispatch(base);
}

/* Runs fn in a child with SIGPIPE at its default action and unblocked.
 * RETURN the child's wait status. */
static int
in_child(int (*fn)(void))
{
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        mgr_loop_child();
        _exit(fn());
    }
    int st = 0;
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return st;
}

/* ---- the children ---------------------------------------------------- */

static int
child_plain(void)
{
    int e = scene_run(plain_dispatch);
    return e == EPIPE ? 0 : 50; /* not reached when SIGPIPE kills */
}

/* Exit 0 when the scene ended by the error, nothing pending, the mask
 * and the disposition as they were; a number saying which failed. */
static int
child_loop(void)
{
    int e = scene_run(mgr_loop_run);
    if (e != EPIPE)
        return e >= 100 ? e : 10;
    sigset_t pend, mask;
    sigpending(&pend);
    if (sigismember(&pend, SIGPIPE))
        return 11;
    pthread_sigmask(SIG_SETMASK, NULL, &mask);
    if (sigismember(&mask, SIGPIPE))
        return 12;
    struct sigaction sa;
    sigaction(SIGPIPE, NULL, &sa);
    if (sa.sa_handler != SIG_DFL)
        return 13;
    return 0;
}

static int
child_blocked_before(void)
{
    sigset_t pipe, mask, pend;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, NULL);
    int e = scene_run(mgr_loop_run);
    if (e != EPIPE)
        return e >= 100 ? e : 20;
    pthread_sigmask(SIG_SETMASK, NULL, &mask);
    if (!sigismember(&mask, SIGPIPE))
        return 21; /* the caller's block was lifted */
    sigpending(&pend);
    if (!sigismember(&pend, SIGPIPE))
        return 22; /* the caller's pending signal was taken */
    return 0;
}

/* ---- tests ----------------------------------------------------------- */

static void
test_control_dies(void **state)
{
    (void)state;
    int st = in_child(child_plain);
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGPIPE)
        fail_msg("the control should die of SIGPIPE: status %d", st);
}

static void
test_loop_survives(void **state)
{
    (void)state;
    for (int i = 0; i < 5; i++) { /* five scenes: none may end the child */
        int st = in_child(child_loop);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            fail_msg("scene %d: child status %d (signal %d, exit %d)", i, st,
                     WIFSIGNALED(st) ? WTERMSIG(st) : 0, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
}

static void
test_blocked_before_kept(void **state)
{
    (void)state;
    int st = in_child(child_blocked_before);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("child status %d (exit %d)", st, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_control_dies),
        cmocka_unit_test(test_loop_survives),
        cmocka_unit_test(test_blocked_before_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
