/*
 * Fan-out reader for bench/latency.py: N subscribers to a reachd daemon, one
 * epoll loop. Prints "ready" once every subscriber has its first status, then
 * for each later status, once all N have it: "K FIRST_NS LAST_NS", the
 * CLOCK_MONOTONIC times at which the first and the last subscriber had status
 * K to read.
 *
 * In C, because what is measured is the daemon writing to N sockets: a reader
 * in Python spends longer per socket than the daemon does. Even in C, reading
 * a Unix socket costs more than writing one (about 4 us against 2 us here), so
 * with both on a 2-core machine a reader that reads as it goes measures
 * itself. So each socket is armed once (EPOLLONESHOT) and stamped when the
 * kernel reports it readable, which costs the reader next to nothing; only
 * once every subscriber has the status does it read them all and re-arm.
 *
 * Usage: fanout SOCKET N
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_STATUSES 4096

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: fanout SOCKET N\n");
        return 2;
    }
    const char *path = argv[1];
    int n = atoi(argv[2]);
    struct rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);

    int epoll = epoll_create1(0);
    int *lines = calloc((size_t)n, sizeof(int));          /* statuses read, per subscriber */
    int *fds = calloc((size_t)n, sizeof(int));
    int *counts = calloc(MAX_STATUSES, sizeof(int));      /* subscribers that read status K */
    uint64_t *first = calloc(MAX_STATUSES, sizeof(uint64_t));
    uint64_t *last = calloc(MAX_STATUSES, sizeof(uint64_t));
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, path, sizeof(address.sun_path) - 1);
    for (int i = 0; i < n; i++) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) {
            perror("connect");
            return 1;
        }
        const char request[] = "{\"op\":\"subscribe\"}\n";
        if (write(fd, request, sizeof(request) - 1) != (ssize_t)sizeof(request) - 1) {
            perror("write");
            return 1;
        }
        fds[i] = fd;
        struct epoll_event event = {.events = EPOLLIN | EPOLLONESHOT, .data.u64 = (uint64_t)i};
        epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
    }
    int reported = 0; /* statuses reported so far; status 0 is the first */
    int fired = 0;    /* sockets reported readable since they were last armed */
    char buffer[65536];
    struct epoll_event events[256];
    for (;;) {
        int ready = epoll_wait(epoll, events, 256, -1);
        if (ready < 0 && errno == EINTR) continue;
        uint64_t at = now_ns();
        for (int e = 0; e < ready; e++) {
            int i = (int)events[e].data.u64;
            int k = lines[i];
            if (k >= MAX_STATUSES) return 0;
            if (counts[k]++ == 0) first[k] = at;
            last[k] = at;
            fired++;
        }
        if (fired < n) continue;
        /* Every subscriber has its next status: read them, count lines that
         * came with it (stamped now: a later status arrived before the
         * reading), and arm each again. */
        for (int i = 0; i < n; i++) {
            int newlines = 0;
            ssize_t count;
            while ((count = recv(fds[i], buffer, sizeof(buffer), MSG_DONTWAIT)) > 0) {
                for (ssize_t b = 0; b < count; b++) newlines += buffer[b] == '\n';
            }
            if (count == 0) {
                fprintf(stderr, "subscriber %d: closed\n", i);
                return 1;
            }
            for (int extra = 1; extra < newlines; extra++) {
                int k = lines[i] + extra;
                if (k >= MAX_STATUSES) return 0;
                if (counts[k]++ == 0) first[k] = now_ns();
                last[k] = now_ns();
            }
            lines[i] += newlines > 0 ? newlines : 0;
            struct epoll_event event = {.events = EPOLLIN | EPOLLONESHOT, .data.u64 = (uint64_t)i};
            epoll_ctl(epoll, EPOLL_CTL_MOD, fds[i], &event);
        }
        fired = 0;
        while (reported < MAX_STATUSES && counts[reported] == n) {
            if (reported == 0) printf("ready\n");
            else printf("%d %llu %llu\n", reported, (unsigned long long)first[reported], (unsigned long long)last[reported]);
            fflush(stdout);
            reported++;
        }
    }
}
