import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findOnPath, headedModeFor } from './headed-mode';

describe('headedModeFor', () => {
  it('uses the Host screen when DISPLAY or WAYLAND_DISPLAY is set, even with Xvfb around', () => {
    expect(headedModeFor({ platform: 'linux', display: ':0', xvfbPath: '/usr/bin/Xvfb' })).toBe('display');
    expect(headedModeFor({ platform: 'linux', waylandDisplay: 'wayland-0' })).toBe('display');
  });
  it('falls back to a private Xvfb, then quietly to headless', () => {
    expect(headedModeFor({ platform: 'linux', xvfbPath: '/usr/bin/Xvfb' })).toBe('xvfb');
    expect(headedModeFor({ platform: 'linux' })).toBe('headless');
  });
  it('counts macOS and Windows as having a screen', () => {
    expect(headedModeFor({ platform: 'darwin' })).toBe('display');
    expect(headedModeFor({ platform: 'win32' })).toBe('display');
  });
});

describe('findOnPath', () => {
  it('finds an executable on the given PATH only', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sf-path-unit-'));
    await writeFile(join(dir, 'Xvfb'), '#!/bin/sh\n');
    await chmod(join(dir, 'Xvfb'), 0o755);
    await writeFile(join(dir, 'notexec'), '');
    expect(findOnPath('Xvfb', `/nonexistent:${dir}`)).toBe(join(dir, 'Xvfb'));
    expect(findOnPath('notexec', dir)).toBeUndefined();
    expect(findOnPath('Xvfb', '/nonexistent')).toBeUndefined();
    await rm(dir, { recursive: true, force: true });
  });
});
