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
 * Asks, for the calling thread, that its slice be `nanoseconds` long (EEVDF's
 * custom slice, Linux 6.12 and later; older kernels ignore it), keeping its
 * policy and nice value: only a thread of the normal policy asks, so a user's
 * choice of SCHED_BATCH, SCHED_IDLE or a real-time policy stands. Returns 0,
 * or -1 with errno set (EPERM under a seccomp filter that denies it).
 */
static inline int reachd_request_time_slice(unsigned long long nanoseconds)
{
	if (sched_getscheduler(0) != SCHED_OTHER) {
		errno = EPERM;
		return -1;
	}
	errno = 0;
	int nice = getpriority(PRIO_PROCESS, 0);
	if (nice == -1 && errno != 0)
		return -1;
	struct reachd_sched_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.sched_policy = SCHED_OTHER;
	attr.sched_nice = nice;
	attr.sched_runtime = nanoseconds;
	return (int)syscall(SYS_sched_setattr, 0, &attr, 0);
}

#endif
