/*
 * loop.h - the event loop of the manager, the worker and `checkers
 * serve`, run so that a peer that closes its socket while we write to it
 * costs that one connection, never the process (SIGPIPE).
 *
 * THE PROBLEM
 *   Writing to a socket (or pipe) whose peer has gone raises SIGPIPE,
 *   whose default action ends the process. Our own writes can say no to
 *   that per call (send with MSG_NOSIGNAL), but most writes to sockets
 *   here are libevent's: a bufferevent writes its output with writev(),
 *   which has no such flag, and libevent 2.1 offers no option for it.
 *   Linux has no per-socket switch either (no SO_NOSIGPIPE, as the BSDs
 *   and macOS have). Until issue 42 mgr_run and wrk_run therefore set
 *   SIGPIPE to SIG_IGN for the whole process: a library changing the
 *   signals of the program that calls it, for every thread and every
 *   descriptor, and inherited by the programs it runs.
 *
 * WHAT IS DONE INSTEAD
 *   SIGPIPE is blocked for the thread that runs the loop, for the time of
 *   the loop only (pthread_sigmask). A SIGPIPE raised by a write is
 *   directed at the thread that wrote; blocked, it stays pending and does
 *   nothing, and the write fails with EPIPE, which the bufferevent
 *   reports as an error on that one connection, as before. Before the
 *   thread's mask is restored, a pending SIGPIPE is taken off with
 *   sigtimedwait (zero timeout), so it is not delivered afterwards. SIGPIPE
 *   is one bit, not a queue: however many writes failed, one wait clears
 *   it. The process's disposition of SIGPIPE is never touched: other
 *   threads and the code around the loop keep the default.
 *   The project's own writes to sockets use send(..., MSG_NOSIGNAL)
 *   (worker.c's wake-up of its loop); a forked child unblocks SIGPIPE
 *   before exec (mgr_loop_child), so that the programs we start begin
 *   with the signal state a program expects.
 *
 *   Threads created by the loop's callbacks inherit the blocked signal;
 *   they do not write to sockets, and a signal pending on a thread goes
 *   with it when it ends.
 *
 * THREAD SAFETY
 *   Both functions act on the calling thread only.
 */
#ifndef MANAGER_LOOP_H
#define MANAGER_LOOP_H

struct event_base;

/*
 * mgr_loop_run - event_base_dispatch(base), with SIGPIPE blocked for the
 * calling thread while it runs (above). A SIGPIPE raised meanwhile is
 * cleared before the thread's mask is restored (unless it was blocked
 * already when mgr_loop_run was called: then nothing is changed or
 * cleared). RETURN what event_base_dispatch returned.
 */
int mgr_loop_run(struct event_base *base);

/* In a child of fork(), before exec: SIGPIPE unblocked (a blocked signal
 * stays blocked across exec). */
void mgr_loop_child(void);

#endif /* MANAGER_LOOP_H */
