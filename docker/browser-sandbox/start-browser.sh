#!/bin/sh
# Entry of the browser sandbox (docker/Dockerfile.browser-sandbox). tini is PID 1;
# this script is its only child and ends as Chromium (exec), so the container lives
# exactly as long as the browser: a graceful Browser.close stops it, a crash too.
#
# The container host (libs/browser-hosts, ContainerChromeAdapter) passes Chromium's
# arguments as the command and STAGEFLOW_XVFB=1 for a headed browser.
set -eu

PROFILE=/profile
# Chrome binds its debugging port to 127.0.0.1 of this container only (it ignores
# --remote-debugging-address), so a relay on the container's interface forwards it.
CDP_PORT=9222
RELAY_PORT=9223

# A container of this profile that crashed or was killed left Chrome's lock behind,
# naming the old container's hostname: Chrome would refuse the profile (exit 21) as
# "in use on another computer". The host runs at most one container per profile
# volume and checks that before it starts this one, so a lock here is stale.
rm -f "$PROFILE/SingletonLock" "$PROFILE/SingletonSocket" "$PROFILE/SingletonCookie" "$PROFILE/DevToolsActivePort"

if [ "${STAGEFLOW_XVFB:-0}" = 1 ]; then
  # Headed on a private virtual display: a desktop user agent, and the live view
  # streams it over CDP. /tmp is the container's tmpfs.
  Xvfb :99 -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
  waited=0
  while [ ! -S /tmp/.X11-unix/X99 ]; do
    if [ "$waited" -ge 100 ]; then
      echo "stageflow: Xvfb did not open its socket within 10 s" >&2
      exit 70
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  export DISPLAY=:99
fi

# One socat per connection (fork); it only ever forwards to Chrome's loopback port.
socat -lpstageflow-relay "TCP-LISTEN:$RELAY_PORT,bind=0.0.0.0,fork,reuseaddr" "TCP:127.0.0.1:$CDP_PORT" &

# The real binary, not Debian's /usr/bin/chromium wrapper: the wrapper adds its own
# flags (Google API keys, --disable-dev-shm-usage below 3.8 GB of /dev/shm, which
# would move shared memory into the small /tmp tmpfs and make shm_size moot).
exec /usr/lib/chromium/chromium "$@"
