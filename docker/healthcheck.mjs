// Container healthcheck without curl: `node healthcheck.mjs <PORT_ENV> <default port> <path>`.
// Probes loopback, which works whether the service binds 127.0.0.1 or 0.0.0.0,
// and follows a port changed through the service's own variable. Sends the api
// token when the container has one, so the probe works however the api guards
// its health route.
const [portEnv, defaultPort, path] = process.argv.slice(2);
const port = process.env[portEnv] || defaultPort;
const token = process.env.STAGEFLOW_API_TOKEN;

// A plain (ref'd) timer, not AbortSignal.timeout(): fetch does not always keep
// the event loop alive while it connects, and a process whose loop drains
// exits 0, which Docker would take for "healthy".
const deadline = setTimeout(() => process.exit(1), 4000);
fetch(`http://127.0.0.1:${port}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} }).then(
  (res) => process.exit(res.ok ? 0 : 1),
  () => process.exit(1),
);
process.on('beforeExit', () => {
  clearTimeout(deadline);
  process.exit(1);
});
