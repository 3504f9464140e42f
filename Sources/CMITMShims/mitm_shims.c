#include "mitm_shims.h"
#include <sys/socket.h>
#include <malloc.h>

int mitm_accept_nonblocking(int fd, struct sockaddr *address, socklen_t *length) {
    return accept4(fd, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int mitm_release_free_memory(void) {
    return malloc_trim(0);
}

#ifdef __linux__
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

int mitm_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int mitm_epoll_register(int epfd, int fd, uint32_t interest, uint64_t token, int modify) {
    struct epoll_event event = {0};
    event.events = EPOLLET;
    if (interest & MITM_READY_READABLE) event.events |= EPOLLIN | EPOLLRDHUP;
    if (interest & MITM_READY_WRITABLE) event.events |= EPOLLOUT;
    event.data.u64 = token;
    return epoll_ctl(epfd, modify ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &event);
}

int mitm_epoll_register_exclusive(int epfd, int fd, uint64_t token) {
    struct epoll_event event = {0};
    event.events = EPOLLIN | EPOLLET | EPOLLEXCLUSIVE;
    event.data.u64 = token;
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event);
}

int mitm_epoll_deregister(int epfd, int fd) {
    return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
}

int mitm_epoll_wait(int epfd, struct mitm_ready_event *events, int capacity, int timeout_ms) {
    struct epoll_event raw[256];
    if (capacity > 256) capacity = 256;
    int count = epoll_wait(epfd, raw, capacity, timeout_ms);
    for (int i = 0; i < count; i++) {
        uint32_t bits = raw[i].events;
        uint32_t ready = 0;
        if (bits & EPOLLIN) ready |= MITM_READY_READABLE;
        if (bits & EPOLLOUT) ready |= MITM_READY_WRITABLE;
        if (bits & EPOLLRDHUP) ready |= MITM_READY_READ_HANGUP;
        if (bits & EPOLLHUP) ready |= MITM_READY_HANGUP;
        if (bits & EPOLLERR) ready |= MITM_READY_ERROR;
        events[i].token = raw[i].data.u64;
        events[i].events = ready;
    }
    return count;
}

int mitm_eventfd_create(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

void mitm_eventfd_signal(int fd) {
    uint64_t one = 1;
    ssize_t written = write(fd, &one, sizeof one);
    (void)written;
}

void mitm_eventfd_drain(int fd) {
    uint64_t value;
    ssize_t got = read(fd, &value, sizeof value);
    (void)got;
}

void mitm_set_thread_name(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

uint64_t mitm_monotonic_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}
#endif
