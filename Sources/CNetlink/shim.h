#ifndef REACHD_CNETLINK_SHIM_H
#define REACHD_CNETLINK_SHIM_H

// The libnl-3 and libnl-route-3 headers reachd uses, plus the kernel's own
// rtnetlink definitions (message types, multicast groups, attribute ids).
// Only files under Sources/Reachability/Netlink import this module.

#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/if_addr.h>
#include <linux/neighbour.h>
#include <linux/filter.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>
#include <netlink/netlink.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/socket.h>
#include <netlink/route/rtnl.h>
#include <netlink/route/link.h>
#include <netlink/route/addr.h>
#include <netlink/route/route.h>
#include <netlink/route/nexthop.h>
#include <netlink/route/neighbour.h>

// NLM_F_DUMP is a macro of other macros, which Swift cannot import.
static inline unsigned int cnl_nlm_f_dump(void) { return NLM_F_DUMP; }

static inline unsigned int cnl_inet_diag_msg_size(void) { return sizeof(struct inet_diag_msg); }
// SKF_AD_OFF is a negative macro expression.
static inline unsigned int cnl_skf_ad_nlattr(void) { return (unsigned int)(SKF_AD_OFF + SKF_AD_NLATTR); }

#endif
