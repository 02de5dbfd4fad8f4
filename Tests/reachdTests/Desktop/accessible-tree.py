#!/usr/bin/python3
"""Prints what a screen reader finds in a running application, as AT-SPI
gives it: one JSON object per line, {"role", "name", "description"}, for
every object of the application named argv[1] that is visible. (GTK 4.8
marks no object but the window SHOWING, and a GtkStack's pages all
VISIBLE: which page is on the screen is for OCR to say.)

Run on the session bus the application uses (its accessibility bus is
found through it). Exits 1 when no such application is there.
"""
import json
import sys

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402


def walk(node, depth=0):
    if node is None or depth > 64:
        return
    states = node.get_state_set()
    if depth > 0 and not states.contains(Atspi.StateType.VISIBLE):
        return
    print(json.dumps({"role": node.get_role_name(), "name": node.get_name(),
                      "description": node.get_description()}))
    for index in range(node.get_child_count()):
        walk(node.get_child_at_index(index), depth + 1)


def main():
    desktop = Atspi.get_desktop(0)
    for index in range(desktop.get_child_count()):
        application = desktop.get_child_at_index(index)
        if application is not None and application.get_name() == sys.argv[1]:
            walk(application)
            return 0
    return 1


sys.exit(main())
