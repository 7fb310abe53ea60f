export { testRedisUrl, uniquePrefix } from './lib/redis-test';
export { BROWSER_SANDBOX_IMAGE, docker, ensureBrowserSandboxImage, removeDockerLeftovers } from './lib/browser-sandbox';
export { LOGIN_SITE, logInOnTab, loginCookies } from './lib/login-page';
export { waitFor } from './lib/wait-for';
