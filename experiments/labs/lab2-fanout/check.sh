#!/bin/sh
# The public checks of lab 2: grades a policy (default: starter.lua) on the lab's small fixed
# graphs. Usage: ./check.sh [student.lua]   (HALO=path/to/halo to use another binary)
here=$(dirname "$0")
exec "${HALO:-halo}" lab check 2 "${1:-$here/starter.lua}"
