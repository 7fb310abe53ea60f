#!/bin/sh
# browser-host's entrypoint (under tini). Compose starts it as root with every
# capability dropped but SETUID and SETGID, only so it can join the group that
# owns the Docker socket (its gid differs from machine to machine); it then
# runs as node (uid 1000) with that group and no capabilities at all. Started
# as node (plain `docker run`), it just runs. See docs/docker.md.
set -eu
if [ "$(id -u)" = 0 ]; then
  groups=1000
  if [ -S /var/run/docker.sock ]; then groups="$groups,$(stat -c %g /var/run/docker.sock)"; fi
  exec setpriv --reuid=1000 --regid=1000 --groups="$groups" --inh-caps=-all "$@"
fi
exec "$@"
