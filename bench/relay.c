/*
 * The floor of a hop, for bench/latency.py: what the kernel alone costs to
 * carry a route change one process further, so that reachd's hop (through
 * the daemon against in-process) is compared with it in the same run.
 *
 *   relay direct   reads the kernel's route notifications and prints a
 *                  line per batch: the least an in-process watcher does;
 *   relay hop      one process reads them and writes a line to a Unix
 *                  stream socket, a second reads that and prints it: the
 *                  least a daemon and its subscriber do;
 *   relay fan SOCKET LENGTH
 *                  listens on SOCKET, writes each subscriber a line of
 *                  LENGTH bytes when it connects, and another to each, in
 *                  the order they came, per batch of notifications: the
 *                  least a daemon's fan-out does, for bench/fanout.c to
 *                  read as it reads the daemon's.
 *
 * No parsing, no allocation per change, blocking writes: nothing of ours is
 * measured.
 */
#define _GNU_SOURCE /* accept4 */
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int route_socket(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	struct sockaddr_nl address = {
		.nl_family = AF_NETLINK,
		.nl_groups = RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE,
	};
	if (fd < 0 || bind(fd, (struct sockaddr *)&address, sizeof address) < 0) {
		perror("relay: netlink");
		return -1;
	}
	return fd;
}

/* Copies what each read of `from` brings as one line to `to`, until either ends. */
static int forward(int from, int to, int as_line)
{
	static char buffer[65536];
	for (;;) {
		ssize_t got = read(from, buffer, sizeof buffer);
		if (got <= 0)
			return got == 0 ? 0 : 1;
		const char *line = as_line ? "route\n" : buffer;
		size_t length = as_line ? 6 : (size_t)got;
		if (write(to, line, length) != (ssize_t)length)
			return 1;
	}
}

/* Writes `line` to every subscriber; one that went away is dropped. */
static void broadcast(int *subscribers, int *count, const char *line, size_t length)
{
	int kept = 0;
	for (int i = 0; i < *count; i++) {
		if (write(subscribers[i], line, length) == (ssize_t)length)
			subscribers[kept++] = subscribers[i];
		else
			close(subscribers[i]);
	}
	*count = kept;
}

static int fan(int kernel, const char *path, size_t length)
{
	struct rlimit limit;
	getrlimit(RLIMIT_NOFILE, &limit);
	limit.rlim_cur = limit.rlim_max;
	setrlimit(RLIMIT_NOFILE, &limit);
	char *line = malloc(length);
	int *subscribers = malloc(sizeof(int) * limit.rlim_cur);
	if (!line || !subscribers || length == 0)
		return 1;
	memset(line, 'x', length - 1);
	line[length - 1] = '\n';
	int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un address = {.sun_family = AF_UNIX};
	strncpy(address.sun_path, path, sizeof address.sun_path - 1);
	unlink(path);
	if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) < 0 ||
	    listen(listener, 4096) < 0) {
		perror("relay: listen");
		return 1;
	}
	int poll = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event accepting = {.events = EPOLLIN, .data.fd = listener};
	struct epoll_event hearing = {.events = EPOLLIN, .data.fd = kernel};
	if (epoll_ctl(poll, EPOLL_CTL_ADD, listener, &accepting) < 0 ||
	    epoll_ctl(poll, EPOLL_CTL_ADD, kernel, &hearing) < 0) {
		perror("relay: epoll");
		return 1;
	}
	static char buffer[65536];
	int count = 0;
	for (;;) {
		struct epoll_event events[2];
		int ready = epoll_wait(poll, events, 2, -1);
		for (int e = 0; e < ready; e++) {
			if (events[e].data.fd == listener) {
				int subscriber = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
				if (subscriber < 0)
					continue;
				if ((rlim_t)count < limit.rlim_cur && write(subscriber, line, length) == (ssize_t)length)
					subscribers[count++] = subscriber;
				else
					close(subscriber);
				continue;
			}
			/* Every notification queued, then one line each: a batch, as the daemon reads one. */
			while (recv(kernel, buffer, sizeof buffer, MSG_DONTWAIT) > 0)
				;
			broadcast(subscribers, &count, line, length);
		}
	}
}

int main(int argc, char **argv)
{
	int fanning = argc == 4 && !strcmp(argv[1], "fan");
	if (!fanning && (argc != 2 || (strcmp(argv[1], "direct") && strcmp(argv[1], "hop")))) {
		fprintf(stderr, "usage: relay direct|hop|fan SOCKET LENGTH\n");
		return 2;
	}
	int kernel = route_socket();
	if (kernel < 0)
		return 1;
	if (fanning)
		return fan(kernel, argv[2], (size_t)strtoul(argv[3], NULL, 10));
	if (!strcmp(argv[1], "direct")) {
		if (write(1, "ready\n", 6) != 6)
			return 1;
		return forward(kernel, 1, 1);
	}
	int pair[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) {
		perror("relay: socketpair");
		return 1;
	}
	pid_t subscriber = fork();
	if (subscriber < 0) {
		perror("relay: fork");
		return 1;
	}
	if (subscriber == 0) {
		/* The subscriber: the socket's lines to stdout; gone with its parent. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(kernel);
		close(pair[0]);
		if (write(1, "ready\n", 6) != 6)
			return 1;
		return forward(pair[1], 1, 0);
	}
	close(pair[1]);
	close(1);
	return forward(kernel, pair[0], 1);
}
