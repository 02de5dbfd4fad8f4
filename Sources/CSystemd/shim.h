#ifndef REACHD_CSYSTEMD_SHIM_H
#define REACHD_CSYSTEMD_SHIM_H

// libsystemd's D-Bus client, for logind's PrepareForSleep signal. Only
// Sources/reachd/Daemon/SleepWatch.swift imports this module.

#include <systemd/sd-bus.h>

#endif
