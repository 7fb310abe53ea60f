import type Docker from 'dockerode';
import { buildChromeArgs } from '../chrome-switches';
import {
  demuxDockerLog,
  isSafeName,
  profileVolumeName,
  relayAddress,
  sandboxContainerSpec,
  sandboxOf,
  type SandboxSpecInput,
} from './sandbox-container';

const input: SandboxSpecInput = {
  browserId: 'sb-0123',
  hostId: 'h1',
  owner: { runId: 'run-1', scope: 'local', profile: 'work' },
  headedMode: 'xvfb',
  args: ['--no-first-run', 'about:blank'],
  image: 'stageflow-browser-sandbox:local',
  shmSizeBytes: 1024 ** 3,
  memoryBytes: 512 * 1024 ** 2,
  pidsLimit: 256,
  exposure: { mode: 'published', network: 'sf-browsers-h1' },
};

describe('the browser container spec', () => {
  it('is hardened with the configured limits, labelled, and mounts the profile volume', () => {
    const spec = sandboxContainerSpec(input);
    expect(spec).toMatchObject({
      name: 'sf-browser-sb-0123',
      Image: 'stageflow-browser-sandbox:local',
      Cmd: ['--no-first-run', 'about:blank'],
      User: '1000:1000',
      Env: ['STAGEFLOW_XVFB=1'],
      Labels: {
        'stageflow.run': 'run-1',
        'stageflow.scope': 'local',
        'stageflow.profile': 'work',
        'stageflow.host': 'h1',
        'stageflow.browser': 'sb-0123',
        'stageflow.headed-mode': 'xvfb',
      },
      HostConfig: {
        ReadonlyRootfs: true,
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges:true'],
        PidsLimit: 256,
        Memory: 512 * 1024 ** 2,
        MemorySwap: 512 * 1024 ** 2,
        ShmSize: 1024 ** 3,
        Mounts: [{ Type: 'volume', Source: 'sf-profile-local-work', Target: '/profile', ReadOnly: false }],
        NetworkMode: 'sf-browsers-h1',
        PortBindings: { '9223/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] },
        RestartPolicy: { Name: 'no' },
      },
    });
    expect(spec.HostConfig?.Tmpfs).toEqual({ '/tmp': expect.stringMatching(/(^|,)noexec(,|$)/) });
    expect(spec.HostConfig?.Privileged).toBeFalsy();
    expect(spec.HostConfig?.CapAdd).toBeUndefined();
  });

  it('publishes nothing when attached to the stack network, and runs headless without a display', () => {
    const spec = sandboxContainerSpec({ ...input, headedMode: 'headless', exposure: { mode: 'attached', network: 'stageflow_default' } });
    expect(spec.HostConfig?.PortBindings).toEqual({});
    expect(spec.HostConfig?.NetworkMode).toBe('stageflow_default');
    expect(spec.Env).toEqual(['STAGEFLOW_XVFB=0']);
  });

  it('gives Chromium in a container its fixed port, no sandbox of its own and no /proc markers', () => {
    const args = buildChromeArgs({
      launchArgs: ['--lang=de'],
      userDataDir: '/profile',
      browserId: 'sb-0123',
      hostId: 'h1',
      headless: true,
      runningAsRoot: false,
      containerSandbox: true,
      debuggingPort: 9222,
      processMarkers: false,
    });
    expect(args).toEqual(expect.arrayContaining(['--user-data-dir=/profile', '--remote-debugging-port=9222', '--no-sandbox', '--headless=new', '--lang=de']));
    expect(args.some((a) => a.startsWith('--stageflow-'))).toBe(false);
    expect(args.slice(0, 6)).toEqual([
      '--deny-permission-prompts',
      '--password-store=basic',
      '--disable-sync',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ]);
  });
});

describe('names and addresses', () => {
  it('names the profile volume after scope and profile, and accepts only safe names', () => {
    expect(profileVolumeName('local', 'work')).toBe('sf-profile-local-work');
    expect(isSafeName('work.2')).toBe(true);
    for (const bad of ['', '-x', '../x', 'a/b', 'a b', 'x'.repeat(65)]) expect(isSafeName(bad)).toBe(false);
  });

  const info = (ports: unknown, networks: unknown) => ({ NetworkSettings: { Ports: ports, Networks: networks } }) as unknown as Docker.ContainerInspectInfo;

  it('reaches a published relay on 127.0.0.1 only, an attached one at its address on the network', () => {
    const published = { mode: 'published', network: 'n' } as const;
    expect(relayAddress(info({ '9223/tcp': [{ HostIp: '127.0.0.1', HostPort: '49153' }] }, {}), published)).toEqual({ host: '127.0.0.1', port: 49153 });
    expect(relayAddress(info({ '9223/tcp': [{ HostIp: '0.0.0.0', HostPort: '49153' }] }, {}), published)).toBeUndefined();
    expect(relayAddress(info({ '9223/tcp': null }, {}), published)).toBeUndefined();
    const attached = { mode: 'attached', network: 'stack' } as const;
    expect(relayAddress(info({}, { stack: { IPAddress: '172.20.0.7' } }), attached)).toEqual({ host: '172.20.0.7', port: 9223 });
    expect(relayAddress(info({}, { other: { IPAddress: '172.21.0.7' } }), attached)).toBeUndefined();
  });

  it('reads a browser container back from its labels, and nothing else', () => {
    const labels = sandboxContainerSpec(input).Labels;
    expect(sandboxOf('c1', labels, true)).toEqual({ containerId: 'c1', browserId: 'sb-0123', runId: 'run-1', scope: 'local', profile: 'work', hostId: 'h1', running: true });
    expect(sandboxOf('c2', { 'stageflow.run': 'r' }, false)).toBeUndefined();
    expect(sandboxOf('c3', undefined, false)).toBeUndefined();
  });
});

describe('demuxDockerLog', () => {
  const frame = (stream: number, text: string) => {
    const body = Buffer.from(text);
    const header = Buffer.alloc(8);
    header[0] = stream;
    header.writeUInt32BE(body.length, 4);
    return Buffer.concat([header, body]);
  };

  it('joins stdout and stderr frames, and passes a TTY log through', () => {
    expect(demuxDockerLog(Buffer.concat([frame(1, 'a\n'), frame(2, 'b\n')]))).toBe('a\nb\n');
    expect(demuxDockerLog(Buffer.from('plain text\n'))).toBe('plain text\n');
    expect(demuxDockerLog(Buffer.alloc(0))).toBe('');
  });
});
