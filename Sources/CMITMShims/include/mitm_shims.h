#ifndef MITM_SHIMS_H
#define MITM_SHIMS_H

// The system calls and constants Swift cannot reach directly (macros, variadic calls, packed structs): sockets, epoll,
// eventfd, process spawning, opening beneath a directory. OpenSSL's are in CMITMTLSShims.

#include <sys/socket.h>
#include <sys/types.h>
#include <stddef.h>

// accept4 needs _GNU_SOURCE, which Swift's Glibc module does not define.
int mitm_accept_nonblocking(int fd, struct sockaddr *address, socklen_t *length);

// glibc's socket types are enum members behind macros; Swift resolves them inconsistently across
// modules (whole-module builds fail to find SOCK_STREAM), so they are exported as plain constants.
static const int mitm_sock_stream = SOCK_STREAM;
static const int mitm_sock_stream_nonblocking = SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC;

// malloc_trim lives in <malloc.h>, which Swift's Glibc module does not expose.
int mitm_release_free_memory(void);

#ifdef __linux__
#include <stdint.h>

// Readiness bits in a stable encoding: epoll's EPOLL* constants are enum members behind macros
// (EPOLLET does not fit a signed enum) and Swift does not import them reliably.
enum {
    MITM_READY_READABLE = 1,
    MITM_READY_WRITABLE = 2,
    MITM_READY_READ_HANGUP = 4,
    MITM_READY_HANGUP = 8,
    MITM_READY_ERROR = 16,
};

// One ready descriptor as the loop sees it: struct epoll_event is packed on x86-64, which Swift
// cannot lay out, so events are copied into this plain struct on the C side.
struct mitm_ready_event {
    uint64_t token;
    uint32_t events;
};

// epoll_create1 with EPOLL_CLOEXEC (a macro constant).
int mitm_epoll_create(void);

// Registers (or, with modify != 0, changes) fd edge-triggered for the MITM_READY_* bits in interest,
// always adding EPOLLET (and EPOLLRDHUP with readable), which cannot be spelled from Swift.
int mitm_epoll_register(int epfd, int fd, uint32_t interest, uint64_t token, int modify);

// Registers a listening socket edge-triggered for readability with EPOLLEXCLUSIVE: when several epoll sets hold
// it, a new connection wakes one thread waiting on them rather than all.
int mitm_epoll_register_exclusive(int epfd, int fd, uint64_t token);

// EPOLL_CTL_DEL: the op constant is a macro.
int mitm_epoll_deregister(int epfd, int fd);

// epoll_wait for at most timeout_ms (-1: until an event, 0: never blocks), translated into
// mitm_ready_event; capacity at most 256. Returns the number of events, or -1 with errno.
int mitm_epoll_wait(int epfd, struct mitm_ready_event *events, int capacity, int timeout_ms);

// A nonblocking, close-on-exec eventfd (the flags are macros), or -1 with errno.
int mitm_eventfd_create(void);

// Adds one to the eventfd's counter, which makes it readable.
void mitm_eventfd_signal(int fd);

// Reads the counter back to zero.
void mitm_eventfd_drain(int fd);

// Names the calling thread (at most 15 bytes are kept), as ps and debuggers show it.
void mitm_set_thread_name(const char *name);

// CLOCK_MONOTONIC in nanoseconds.
uint64_t mitm_monotonic_nanoseconds(void);
#endif

// Starts `path` with `argv` and `envp` as a client command: stdin, stdout and stderr inherited, every other
// descriptor closed in the child, all signals at their default action and none blocked. Returns 0 or an errno value.
int mitm_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[]);

// prctl is variadic, which Swift cannot call: makes orphaned descendants of this process its children (not init's),
// so that a client command's background processes still count as the command's.
int mitm_become_child_subreaper(void);

// `mitm_spawn` with the child's stdin, stdout and stderr taken from the given descriptors (-1: inherited).
int mitm_spawn_with_stdio(pid_t *pid, const char *path, char *const argv[], char *const envp[],
                          int stdin_fd, int stdout_fd, int stderr_fd);

// Opens `path` (relative, no leading slash) beneath the directory `root_fd` with `flags` (close-on-exec added):
// every symbolic link on the way may lead anywhere inside the root, none out of it, all checked by the kernel in the
// same lookup that opens (openat2 with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS), so a link swapped in meanwhile cannot
// escape. Where openat2 is missing (ENOSYS), or when `component_wise` is set, each component is opened in turn with
// O_NOFOLLOW and no link at all is followed. Returns the descriptor, or -1 with errno: EXDEV or ELOOP for a way out
// of the root (or through a link the fallback refuses), ENOENT / ENOTDIR for nothing there.
int mitm_open_beneath(int root_fd, const char *path, int flags, int component_wise);

#endif
