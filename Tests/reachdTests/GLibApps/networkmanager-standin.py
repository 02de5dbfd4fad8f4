#!/usr/bin/python3
"""NetworkManager as GLib's NetworkManager backend sees it, on the bus named
by DBUS_SYSTEM_BUS_ADDRESS: org.freedesktop.NetworkManager with State,
Connectivity and Metered. Each request for a property waits DELAY seconds
first, as a NetworkManager busy at boot or under load would, and prints
"asked NAME". Prints "ready" once it owns the name.
Usage: networkmanager-standin.py DELAY STATE CONNECTIVITY
"""
import sys
import time

from gi.repository import Gio, GLib

delay, state, connectivity = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
# NM_METERED_NO
values = {"State": state, "Connectivity": connectivity, "Metered": 2}
interface = Gio.DBusNodeInfo.new_for_xml("""
<node>
  <interface name="org.freedesktop.NetworkManager">
    <property name="State" type="u" access="read"/>
    <property name="Connectivity" type="u" access="read"/>
    <property name="Metered" type="u" access="read"/>
  </interface>
</node>""").interfaces[0]


def get_property(connection, sender, path, interface_name, name):
    print("asked", name, flush=True)
    time.sleep(delay)
    return GLib.Variant("u", values[name])


bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
bus.register_object("/org/freedesktop/NetworkManager", interface, None, get_property, None)
Gio.bus_own_name_on_connection(bus, "org.freedesktop.NetworkManager", Gio.BusNameOwnerFlags.NONE,
                               lambda *args: print("ready", flush=True), lambda *args: sys.exit("lost the name"))
GLib.MainLoop().run()
