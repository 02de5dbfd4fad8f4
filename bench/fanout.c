/*
 * Fan-out reader for bench/latency.py: N subscribers to a reachd daemon, one
 * epoll loop. Prints "ready" once every subscriber has its first status, then
 * for each later status, once all N have it: "K FIRST_NS LAST_NS", the
 * CLOCK_MONOTONIC times of the first and the last subscriber to read status K.
 *
 * In C, because what is measured is the daemon writing to N sockets: a reader
 * in Python spends longer per socket than the daemon does.
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
        struct epoll_event event = {.events = EPOLLIN, .data.u64 = ((uint64_t)i << 32) | (uint32_t)fd};
        epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
    }
    int reported = 0; /* statuses reported so far; status 0 is the first */
    char buffer[65536];
    struct epoll_event events[256];
    for (;;) {
        int ready = epoll_wait(epoll, events, 256, -1);
        if (ready < 0 && errno == EINTR) continue;
        uint64_t at = now_ns();
        for (int e = 0; e < ready; e++) {
            int i = (int)(events[e].data.u64 >> 32);
            int fd = (int)(events[e].data.u64 & 0xffffffffu);
            ssize_t count = read(fd, buffer, sizeof(buffer));
            if (count <= 0) {
                fprintf(stderr, "subscriber %d: closed\n", i);
                return 1;
            }
            for (ssize_t b = 0; b < count; b++) {
                if (buffer[b] != '\n') continue;
                int k = lines[i]++;
                if (k >= MAX_STATUSES) return 0;
                if (counts[k]++ == 0) first[k] = at;
                last[k] = at;
            }
        }
        while (reported < MAX_STATUSES && counts[reported] == n) {
            if (reported == 0) printf("ready\n");
            else printf("%d %llu %llu\n", reported, (unsigned long long)first[reported], (unsigned long long)last[reported]);
            fflush(stdout);
            reported++;
        }
    }
}
