export { testRedisUrl, uniquePrefix } from './lib/redis-test';
export { BROWSER_SANDBOX_IMAGE, docker, ensureBrowserSandboxImage, removeDockerLeftovers } from './lib/browser-sandbox';
