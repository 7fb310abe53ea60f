/**
 * What docker-compose.yml promises an operator: only the api is reachable from
 * the host, only on loopback and only with the token; every container runs
 * hardened. The container checks need the stack this tier started itself.
 */
import { compose, run } from './support/compose-stack';
import { api, stackToken, stackUrl } from './support/stageflow-client';
import WebSocket from 'ws';

interface Inspected {
  Config: { User: string; Labels: Record<string, string> };
  HostConfig: { ReadonlyRootfs: boolean; CapDrop: string[] | null; CapAdd: string[] | null; SecurityOpt: string[] | null };
  NetworkSettings: { Ports: Record<string, { HostIp: string; HostPort: string }[] | null> };
}

async function inspectStack(): Promise<Inspected[]> {
  const ids = (await compose(['ps', '-q'])).output.split('\n').filter((l) => /^[0-9a-f]{12,}$/.test(l.trim()));
  const res = await run('docker', ['inspect', ...ids.map((l) => l.trim())]);
  return JSON.parse(res.output) as Inspected[];
}

const startedHere = process.env['STAGEFLOW_E2E_STARTED'] === '1';

describe('the composed stack', () => {
  it('answers health without a token and refuses everything else without it', async () => {
    expect(stackToken()).toBeDefined();
    const health = await api('GET', '/api/health', undefined, null);
    expect(health).toMatchObject({ status: 200, body: { status: 'ok' } });

    const runs = await api<{ code: string; message: string }>('GET', '/api/runs', undefined, null);
    expect(runs.status).toBe(401);
    expect(runs.body.code).toBe('unauthorized');
    expect(runs.body.message).toContain('Authorization: Bearer');

    const wrong = await api('GET', '/api/runs', undefined, 'not-the-token-at-all');
    expect(wrong.status).toBe(401);
  });

  it('refuses a WebSocket without the token', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(`${stackUrl().replace(/^http/, 'ws')}/api/ws`);
      socket.once('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        socket.terminate();
      });
      socket.once('open', () => {
        socket.close();
        reject(new Error('the WebSocket opened without a token'));
      });
      socket.once('error', () => undefined);
    });
    expect(status).toBe(401);
  });

  it('serves the console at / and for its routes, with its assets, no token needed for them', async () => {
    const index = await fetch(`${stackUrl()}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/text\/html/);
    const html = await index.text();
    const script = /<script type="module" src="(\/assets\/main-[A-Z0-9]+\.js)"><\/script>/.exec(html)?.[1];
    expect(script).toBeDefined();
    expect(await (await fetch(`${stackUrl()}/runs/some-run`)).text()).toBe(html);
    const asset = await fetch(`${stackUrl()}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
  });

  (startedHere ? it : it.skip)('publishes only the api, only on 127.0.0.1', async () => {
    const published = (await inspectStack()).flatMap((c) =>
      Object.entries(c.NetworkSettings.Ports ?? {})
        .filter(([, bindings]) => bindings && bindings.length > 0)
        .flatMap(([port, bindings]) => (bindings ?? []).map((b) => `${c.Config.Labels['com.docker.compose.service']} ${port} ${b.HostIp}`)),
    );
    expect(published).toEqual([`api 3000/tcp 127.0.0.1`]);
  });

  (startedHere ? it : it.skip)('runs every service read-only, as a non-root user, without capabilities', async () => {
    const containers = await inspectStack();
    expect(containers.map((c) => c.Config.Labels['com.docker.compose.service']).sort()).toEqual([
      'api',
      'browser-host',
      'browser-sandbox',
      'demo-site',
      'live-view-relay',
      'redis',
      'runner',
    ]);
    const users: Record<string, string> = { redis: 'redis', 'browser-sandbox': '1000:1000', 'browser-host': '0:0' };
    for (const c of containers) {
      const service = c.Config.Labels['com.docker.compose.service'];
      expect({ service, user: c.Config.User }).toEqual({ service, user: users[service] ?? 'node' });
      expect({ service, readOnly: c.HostConfig.ReadonlyRootfs }).toEqual({ service, readOnly: true });
      expect({ service, capDrop: c.HostConfig.CapDrop }).toEqual({ service, capDrop: ['ALL'] });
      expect({ service, capAdd: c.HostConfig.CapAdd ?? [] }).toEqual({ service, capAdd: service === 'browser-host' ? ['SETUID', 'SETGID'] : [] });
      expect({ service, securityOpt: c.HostConfig.SecurityOpt }).toEqual({ service, securityOpt: ['no-new-privileges:true'] });
    }
  });

  (startedHere ? it : it.skip)('runs browser-host itself as uid 1000 with no capabilities, in the Docker socket\'s group', async () => {
    const id = (await compose(['ps', '-q', 'browser-host'])).output.trim();
    const status = await run('docker', [
      'exec',
      id,
      'sh',
      '-c',
      'for p in /proc/[0-9]*; do if tr "\\0" " " < $p/cmdline 2>/dev/null | grep -q "dist/apps/browser-host/main.js"; then grep -E "^(Uid|Gid|Groups|CapEff|CapPrm):" $p/status; fi; done',
    ]);
    const fields = Object.fromEntries(
      status.output
        .split('\n')
        .filter((l) => l.includes(':'))
        .map((l) => l.split(':').map((x) => x.trim()) as [string, string]),
    );
    expect(fields['Uid']?.split(/\s+/)).toEqual(['1000', '1000', '1000', '1000']);
    expect(fields['CapEff']).toBe('0000000000000000');
    expect(fields['CapPrm']).toBe('0000000000000000');
    const socketGid = (await run('stat', ['-c', '%g', '/var/run/docker.sock'])).output.trim();
    expect(fields['Groups']?.split(/\s+/)).toContain(socketGid);
  });
});
