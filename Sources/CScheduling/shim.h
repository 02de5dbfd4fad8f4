/*
 * sched_setattr(2), which glibc before 2.41 does not wrap and Swift cannot
 * call through the variadic syscall(2): the request for a short time slice
 * that the daemon's loop and the following commands make. Nothing else
 * belongs here; only Sources/Reachability/System/TimeSlice.swift imports it.
 */
#ifndef REACHD_CSCHEDULING_SHIM_H
#define REACHD_CSCHEDULING_SHIM_H

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * The kernel's struct sched_attr (its first version, 48 bytes), spelled out:
 * <linux/sched/types.h> cannot be included beside glibc's <sched.h>.
 */
struct reachd_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

/*
 * From <linux/sched.h>: the bit sched_getscheduler(2) adds to a policy whose
 * children start afresh (glibc names it only under _GNU_SOURCE), and
 * sched_setattr's flag that keeps it.
 */
#define REACHD_SCHED_RESET_ON_FORK 0x40000000
#define REACHD_SCHED_FLAG_RESET_ON_FORK 0x01

/*
 * Asks, for the calling thread, that its slice be `nanoseconds` long (EEVDF's
 * custom slice, Linux 6.12 and later; older kernels ignore it), keeping its
 * policy, nice value and reset-on-fork flag. Only a thread of the normal
 * policy asks, so that a user's choice of SCHED_BATCH, SCHED_IDLE or a
 * real-time policy stands. Returns 0 where the kernel took the request, -1
 * where the thread has another policy and nothing was asked, or the error
 * number of a refusal (EPERM under a seccomp filter that denies the call):
 * returned, not left in errno, for a caller that cannot trust errno to last.
 */
static inline int reachd_request_time_slice(unsigned long long nanoseconds)
{
	int policy = sched_getscheduler(0);
	if (policy == -1)
		return errno;
	if ((policy & ~REACHD_SCHED_RESET_ON_FORK) != SCHED_OTHER)
		return -1;
	errno = 0;
	int nice = getpriority(PRIO_PROCESS, 0);
	if (nice == -1 && errno != 0)
		return errno;
	struct reachd_sched_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.sched_policy = SCHED_OTHER;
	attr.sched_flags = (policy & REACHD_SCHED_RESET_ON_FORK) ? REACHD_SCHED_FLAG_RESET_ON_FORK : 0;
	attr.sched_nice = nice;
	attr.sched_runtime = nanoseconds;
	return syscall(SYS_sched_setattr, 0, &attr, 0) == 0 ? 0 : errno;
}

#endif
