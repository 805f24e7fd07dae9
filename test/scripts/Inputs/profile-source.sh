#!/bin/sh
# Stand-in for scripts/profile-source.sh in device-run.test: its arguments
# and the bundle it was given, as a headline line.
echo "ncu rc=0 ($* bundle=$HUMMING_BUNDLE)"
