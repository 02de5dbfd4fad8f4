/*
 * epoll(7) for the daemon's event loop: Swift's Glibc module does not
 * include <sys/epoll.h>. Nothing else belongs here; only
 * Sources/Reachability/System/EventPoll.swift imports it.
 */
#ifndef REACHD_CEVENTPOLL_SHIM_H
#define REACHD_CEVENTPOLL_SHIM_H

#include <sys/epoll.h>

#endif
