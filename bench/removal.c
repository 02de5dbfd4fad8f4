/* Issue 45's removal race, as the kernel alone has it: listens for IPv4
 * route notifications and, on each RTM_DELROUTE, asks RTM_GETROUTE for one
 * address at once, then again until the answer is no longer a route (up to
 * a second). Prints one line per notification:
 *   added
 *   removed gone                 the first answer already lacked the route
 *   removed stale US TRIES       answered by the removed route; gone after
 *                                US microseconds and TRIES lookups
 * The kernel sends RTM_DELROUTE before fib_table_delete unlinks the route.
 * Usage: removal ADDRESS */
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double microseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1e6 + now.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
    struct in_addr address;
    if (argc != 2 || inet_pton(AF_INET, argv[1], &address) != 1) {
        fprintf(stderr, "usage: removal IPV4-ADDRESS\n");
        return 2;
    }
    int events = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    struct sockaddr_nl groups = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_IPV4_ROUTE};
    int queries = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (events < 0 || queries < 0 || bind(events, (struct sockaddr *)&groups, sizeof groups) < 0) {
        perror("removal: netlink");
        return 1;
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("ready\n");
    static char buffer[65536];
    unsigned sequence = 1;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    for (;;) {
        ssize_t count = recv(events, buffer, sizeof buffer, 0);
        if (count <= 0) return 0;
        unsigned short type = ((struct nlmsghdr *)buffer)->nlmsg_type;
        if (type == RTM_NEWROUTE) printf("added\n");
        if (type != RTM_DELROUTE) continue;
        struct {
            struct nlmsghdr header;
            struct rtmsg route;
            struct rtattr attribute;
            struct in_addr destination;
        } request = {0};
        request.header.nlmsg_len = sizeof request;
        request.header.nlmsg_type = RTM_GETROUTE;
        request.header.nlmsg_flags = NLM_F_REQUEST;
        request.route.rtm_family = AF_INET;
        request.route.rtm_dst_len = 32;
        request.attribute.rta_len = RTA_LENGTH(sizeof address);
        request.attribute.rta_type = RTA_DST;
        request.destination = address;
        double start = microseconds();
        int tries = 0;
        unsigned short answer;
        do {
            request.header.nlmsg_seq = sequence++;
            tries++;
            if (sendto(queries, &request, sizeof request, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0
                || recv(queries, buffer, sizeof buffer, 0) <= 0) {
                perror("removal: lookup");
                return 1;
            }
            answer = ((struct nlmsghdr *)buffer)->nlmsg_type;
        } while (answer == RTM_NEWROUTE && microseconds() - start < 1e6);
        if (tries == 1) printf("removed gone\n");
        else printf("removed stale %.1f %d\n", microseconds() - start, tries - 1);
    }
}
