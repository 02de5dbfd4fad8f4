/*
 * The floor of a hop, for bench/latency.py: what the kernel alone costs to
 * carry a route change one process further, so that reachd's hop (through
 * the daemon against in-process) is compared with it in the same run.
 *
 *   relay direct   reads the kernel's route notifications and prints a
 *                  line per batch: the least an in-process watcher does;
 *   relay hop      one process reads them and writes a line to a Unix
 *                  stream socket, a second reads that and prints it: the
 *                  least a daemon and its subscriber do.
 *
 * No parsing, no allocation, blocking reads: nothing of ours is measured.
 */
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
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

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "direct") && strcmp(argv[1], "hop"))) {
		fprintf(stderr, "usage: relay direct|hop\n");
		return 2;
	}
	int kernel = route_socket();
	if (kernel < 0)
		return 1;
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
